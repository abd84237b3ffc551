#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
public import Foundation

/// Finds programs as a shell would: a name with a slash is taken as a path, any other is looked up
/// in the folders of `PATH`.
public enum ExecutableSearch {
    /// The executable path of `name`, or nil when there is none (or it is not executable).
    ///
    /// - Parameter path: the search path; by default the process's `PATH`, else `/usr/bin:/bin`.
    public static func locate(_ name: String, path: String? = ProcessInfo.processInfo.environment["PATH"]) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? URL(fileURLWithPath: name).standardizedFileURL.path : nil }
        for folder in (path ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
