#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A child process started with `posix_spawn` and waited for with `waitpid`. Not Foundation's
/// `Process`: its `waitUntilExit` learns of the exit by polling its run loop, which adds up to
/// 50 ms to every command (measured: `/bin/true` took 51 ms through `Process`, 0.6 ms this way).
/// Its standard input and error are `/dev/null`; its output goes to `/dev/null` or to
/// `output`, a descriptor the caller owns.
public struct SpawnedProcess: Sendable {
    /// The child's process id.
    public let pid: Int32

    /// Starts `arguments` (the first an absolute path) with `environment` (nil: this process's),
    /// or returns nil when it cannot be started.
    public init?(_ arguments: [String], environment: [String: String]? = nil, output: Int32? = nil) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let output {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var child: pid_t = 0
        let spawned = withCStrings(arguments) { argv in
            guard let environment else { return posix_spawn(&child, arguments[0], &actions, nil, argv, environ) }
            return withCStrings(environment.map { $0.key + "=" + $0.value }) { envp in posix_spawn(&child, arguments[0], &actions, nil, argv, envp) }
        }
        guard spawned == 0 else { return nil }
        pid = child
    }

    /// Runs `arguments` to its end, its output discarded; its exit status (128 + the signal's
    /// number when a signal ended it), nil when it could not be started.
    @discardableResult
    public static func run(_ arguments: [String], environment: [String: String]? = nil) -> Int32? {
        SpawnedProcess(arguments, environment: environment)?.wait()
    }

    /// Waits for the child to end: its exit status, 128 + the signal's number when a signal
    /// ended it.
    @discardableResult
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Kills the child (SIGKILL).
    public func kill() { Glibc.kill(pid, SIGKILL) }
}
