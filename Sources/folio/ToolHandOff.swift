#if canImport(Glibc)
import Glibc
#endif

/// Runs `folio-tool`, the whole command, in this process, with this process's arguments.
enum ToolHandOff {
    /// `folio-tool` in the folder of this executable (`/proc/self/exe`, symbolic links followed),
    /// or `$FOLIO_TOOL`.
    static var toolPath: String {
        if let override = getenv("FOLIO_TOOL") { return String(cString: override) }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard length > 0 else { return "folio-tool" }
        let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = executable.lastIndex(of: "/") else { return "folio-tool" }
        return String(executable[...slash]) + "folio-tool"
    }

    /// Replaces this process with `folio-tool`; returns only to exit with a message when it cannot.
    static func execute() -> Never {
        let path = toolPath
        execv(path, CommandLine.unsafeArgv)
        let reason = String(cString: strerror(errno))
        printError("folio: cannot run \(path): \(reason) (folio-tool belongs beside folio)")
        exit(127)
    }

    /// Writes a line to standard error.
    static func printError(_ text: String) {
        let line = Array((text + "\n").utf8)
        var offset = 0
        while offset < line.count {
            let written = line[offset...].withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
