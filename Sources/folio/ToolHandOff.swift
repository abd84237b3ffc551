#if canImport(Glibc)
import Glibc
#endif

/// Runs `folio-tool`, the whole command, in this process, with this process's arguments.
enum ToolHandOff {
    /// This executable's path (`/proc/self/exe`: symbolic links followed); nil when unreadable.
    static var executablePath: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Where `folio-tool` may be, first found first: `$FOLIO_TOOL`; beside this executable (a
    /// build folder); `../lib/folio/` from it (an install: `PREFIX/bin/folio` and
    /// `PREFIX/lib/folio/folio-tool`).
    static var candidates: [String] {
        if let override = getenv("FOLIO_TOOL") { return [String(cString: override)] }
        guard let executable = executablePath, let slash = executable.lastIndex(of: "/") else { return ["folio-tool"] }
        let folder = String(executable[...slash])
        return [folder + "folio-tool", folder + "../lib/folio/folio-tool"]
    }

    /// Replaces this process with `folio-tool`; returns only to exit with a message when it cannot.
    /// Run from a SwiftPM build folder where the tool is not built yet (`swift run folio daemon`
    /// on a fresh clone builds only this front), it builds the tool there first.
    static func execute() -> Never {
        let paths = candidates
        var path = paths.first { access($0, X_OK) == 0 } ?? paths[0]
        if access(path, X_OK) != 0, getenv("FOLIO_TOOL") == nil, let build = BuildFolder(executable: executablePath ?? "") {
            guard build.buildTool() else { exit(127) }
            path = paths[0]
        }
        execv(path, CommandLine.unsafeArgv)
        let reason = String(cString: strerror(errno))
        printError("folio: cannot run \(path): \(reason) (folio-tool belongs beside folio, or in ../lib/folio from it)")
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
