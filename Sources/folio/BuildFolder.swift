#if canImport(Glibc)
import Glibc
#endif

/// The SwiftPM build folder this front was built in (`ROOT/.build/TRIPLE/CONFIGURATION/folio`),
/// where `folio-tool` can be built beside it.
struct BuildFolder {
    /// The package's folder (it holds Package.swift).
    var root: String
    /// The build folder (`ROOT/.build`, or another `--scratch-path` beside Package.swift).
    var scratch: String
    /// `debug` or `release`.
    var configuration: String

    /// The build folder of `executable`; nil when it is not a SwiftPM build's product.
    init?(executable: String) {
        var parts = executable.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 5, parts.removeLast() == "folio" else { return nil }
        let configuration = parts.removeLast()
        _ = parts.removeLast()  // the target triple
        guard ["debug", "release"].contains(configuration), parts.last?.hasPrefix(".build") == true else { return nil }
        let scratch = parts.joined(separator: "/")
        parts.removeLast()
        let root = parts.joined(separator: "/")
        guard access(root + "/Package.swift", R_OK) == 0 else { return nil }
        (self.root, self.scratch, self.configuration) = (root, scratch, configuration)
    }

    /// How long the build may take, in milliseconds.
    static let buildDeadline = 60 * 60 * 1000

    /// Builds `folio-tool` here with `swift build` (found on PATH), its output on standard error;
    /// true when it built.
    func buildTool() -> Bool {
        ToolHandOff.printError("folio: building folio-tool, which runs every command but search (once per build folder; `swift build` builds both)")
        let arguments = ["swift", "build", "--package-path", root, "--scratch-path", scratch, "-c", configuration, "--product", "folio-tool"]
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The build's progress goes to standard error: standard output carries the command's results.
        posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO)
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        guard posix_spawnp(&pid, "swift", &actions, nil, &argv, environ) == 0 else {
            ToolHandOff.printError("folio: cannot run swift to build folio-tool: \(String(cString: strerror(errno)))")
            return false
        }
        // A first build takes minutes; one still running after an hour is stopped, not waited for.
        var status: Int32 = 0
        var waited = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            guard reaped == 0 || errno == EINTR else {
                ToolHandOff.printError("folio: cannot wait for the build of folio-tool: \(String(cString: strerror(errno)))")
                return false
            }
            guard waited < Self.buildDeadline else {
                // SIGTERM lets SwiftPM stop its compilers; ten seconds later, SIGKILL.
                kill(pid, SIGTERM)
                var grace = 0
                while waitpid(pid, &status, WNOHANG) == 0 && grace < 10_000 {
                    usleep(50_000)
                    grace += 50
                }
                if grace >= 10_000 {
                    kill(pid, SIGKILL)
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                }
                ToolHandOff.printError("folio: building folio-tool took more than an hour; stopped (\(arguments.joined(separator: " ")))")
                return false
            }
            usleep(50_000)
            waited += 50
        }
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            ToolHandOff.printError("folio: building folio-tool failed (\(arguments.joined(separator: " ")))")
            return false
        }
        return true
    }
}
