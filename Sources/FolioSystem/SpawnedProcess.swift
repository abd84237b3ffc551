#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims

/// A child process started with `posix_spawn` and waited for with `waitpid`. Not Foundation's
/// `Process`: its `waitUntilExit` learns of the exit by polling its run loop, which adds up to
/// 50 ms to every command (measured: `/bin/true` took 51 ms through `Process`, 0.6 ms this way).
/// Its standard input is `/dev/null`; its output and errors go to `/dev/null` or to `output` and
/// `errors`, descriptors the caller owns. It gets no other descriptor of this process but those
/// `passing` names, whatever their close-on-exec flags: one opened without it elsewhere in the
/// process (Foundation's `Process` keeps a socket to each of its children that way, and learns of
/// the child's end when it closes) would otherwise live on in the child, and a parent that started
/// this process with Foundation would wait for a long-lived child (the daemon) to end.
public struct SpawnedProcess: Sendable {
    /// The child's process id.
    public let pid: Int32

    /// Starts `arguments` (the first an absolute path) with `environment` (nil: this process's),
    /// or returns nil when it cannot be started. With `newSession`, the child leads a session of
    /// its own (no controlling terminal: a terminal's hang-up or Ctrl-C does not reach it).
    /// `passing` gives the child descriptors of this process at the numbers it names (descriptor,
    /// number in the child), open there whatever their close-on-exec flag here. With
    /// `inheritingStandardStreams`, the child gets this process's standard input, output and
    /// errors instead (`output` and `errors` are then ignored): a command run in the foreground.
    public init?(
        _ arguments: [String], environment: [String: String]? = nil, output: Int32? = nil, errors: Int32? = nil, newSession: Bool = false,
        passing: [(descriptor: Int32, number: Int32)] = [], inheritingStandardStreams: Bool = false
    ) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if !inheritingStandardStreams { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
        for (descriptor, target) in [(output, Int32(1)), (errors, Int32(2))] where !inheritingStandardStreams {
            if let descriptor {
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            }
        }
        for passed in passing {
            if passed.descriptor == passed.number {
                // dup2 onto itself keeps close-on-exec: clear it here instead (glibc only clears it
                // itself since 2.38).
                _ = fcntl(passed.descriptor, F_SETFD, 0)
            } else {
                posix_spawn_file_actions_adddup2(&actions, passed.descriptor, passed.number)
            }
        }
        _ = cfolio_spawn_close_from(&actions, (passing.map(\.number).max() ?? 2) + 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with no signal blocked and each at its default action: it would inherit
        // the starting thread's mask (a dispatch worker's blocks nearly every signal, so the child
        // would never receive a SIGTERM) and this process's ignored SIGPIPE.
        var nothing = sigset_t()
        var every = sigset_t()
        sigemptyset(&nothing)
        sigfillset(&every)
        posix_spawnattr_setsigmask(&attributes, &nothing)
        posix_spawnattr_setsigdefault(&attributes, &every)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)
        // POSIX_SPAWN_SETSID (glibc 2.26), which Swift's Glibc module does not export.
        if newSession { flags |= 0x80 }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var child: pid_t = 0
        let spawned = withCStrings(arguments) { argv in
            guard let environment else { return posix_spawn(&child, arguments[0], &actions, &attributes, argv, environ) }
            return withCStrings(environment.map { $0.key + "=" + $0.value }) { envp in posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp) }
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
        return Self.exitStatus(status)
    }

    /// A `waitpid` status as an exit status: 128 + the signal's number when a signal ended it.
    private static func exitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Runs `arguments` for at most `timeLimit`: its exit status (as ``wait()`` gives it), nil
    /// when it could not be started or outlasted the limit (it is then killed).
    public static func run(_ arguments: [String], environment: [String: String]? = nil, timeLimit: Duration) -> Int32? {
        SpawnedProcess(arguments, environment: environment)?.wait(timeLimit: timeLimit)
    }

    /// Waits at most `timeLimit` for the child to end: its exit status (as ``wait()`` gives it),
    /// nil when it outlasted the limit (it is then killed) or cannot be waited for.
    public func wait(timeLimit: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeLimit
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped == -1, errno != EINTR { return nil }
            guard ContinuousClock.now < deadline else {
                kill()
                _ = wait()
                return nil
            }
            usleep(5_000)
        }
        return Self.exitStatus(status)
    }

    /// Kills the child (SIGKILL).
    public func kill() { Glibc.kill(pid, SIGKILL) }
}
