public import Foundation
public import FolioServers

/// The project's own binaries, for cross-process tests.
extension ProcessRunner {
    /// The `folio` executable of this build: `$FOLIO_BINARY`, or `.build/debug/folio` (or release)
    /// beside the package.
    public static func folioExecutable(filePath: String = #filePath) -> URL {
        if let path = ProcessInfo.processInfo.environment["FOLIO_BINARY"] { return URL(fileURLWithPath: path) }
        return builtExecutable("folio", filePath: filePath)
    }

    /// An executable of this package's build (`.build/debug/<name>`, or release), found beside the
    /// `folio` binary named by `$FOLIO_BINARY` when that is set.
    public static func builtExecutable(_ name: String, filePath: String = #filePath) -> URL {
        if let path = ProcessInfo.processInfo.environment["FOLIO_BINARY"] {
            return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(name)
        }
        var root = URL(fileURLWithPath: filePath)
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root.deleteLastPathComponent()
        }
        for configuration in ["debug", "release"] {
            let candidate = root.appendingPathComponent(".build/\(configuration)/\(name)")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return root.appendingPathComponent(".build/debug/\(name)")
    }

    /// Runs the `folio` command.
    public static func folio(_ arguments: [String], environment: [String: String]? = nil) throws -> Output {
        try run(folioExecutable(), arguments, environment: environment)
    }
}
