#if canImport(Glibc)
public import Glibc
#endif
import SystemPackage

/// Lines of a process's `/proc/…/status`, read as the kernel writes them (`Name:\tvalue`).
public enum ProcessStatusFile {
    /// The value of the line `key:` of the status file at `path` (`/proc/self/status`,
    /// `/proc/<pid>/status`), its blanks trimmed; nil when the file or line is not there.
    public static func value(_ key: String, at path: String) -> Substring? {
        guard let bytes = try? FilePath(path).readBytes(maximumSize: 64 << 10) else { return nil }
        let prefix = key + ":"
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            return line.dropFirst(prefix.count).drop { $0 == " " || $0 == "\t" }
        }
        return nil
    }

    /// The process (thread group) the thread `thread` belongs to: FUSE names a request's caller by
    /// its thread. `thread` itself when it cannot be read (a thread that has ended).
    public static func process(ofThread thread: pid_t) -> pid_t {
        value("Tgid", at: "/proc/\(thread)/status").flatMap { pid_t($0) } ?? thread
    }
}
