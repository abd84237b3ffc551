import CFolioShims
#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import SystemPackage

/// A command that never outlives this process: it runs in a process group of its own under a
/// supervisor (`cfolio_spawn_supervised`), which kills the group when this process dies (even by
/// SIGKILL: `PR_SET_PDEATHSIG`) and, when the command ends, whatever it left running. Signals this
/// process receives (SIGTERM, SIGINT, SIGHUP, SIGQUIT) go to the whole group, which gets a grace
/// period to end. `folio coordinate` runs its command this way, so no part of it writes after the
/// claim it ran under has ended.
public enum SupervisedCommand {
    /// Runs `arguments` (the first looked up in `PATH`, by `/usr/bin/env`) with `environment`, and
    /// returns its exit status: 128 + the signal's number when a signal ended it, 127 when it could
    /// not be run. Waits on a thread of its own (the supervisor's death signal is tied to the thread
    /// that started it), suspending the caller meanwhile.
    ///
    /// - Parameter grace: seconds a forwarded signal leaves the command before its group is killed.
    /// - Throws: `Errno` when the supervisor cannot be started.
    public static func run(_ arguments: [String], environment: [String: String], grace: Int = 5) async throws(Errno) -> Int32 {
        let argv = ["env", "--"] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Int32, Errno>, Never>) in
            let thread = Thread(argv: argv, envp: envp, grace: grace) { continuation.resume(returning: $0) }
            thread.start()
        }
        return try outcome.get()
    }

    /// The thread that starts the supervisor, forwards signals to it while it runs, and waits for it.
    private final class Thread: @unchecked Sendable {
        let argv: [String]
        let envp: [String]
        let grace: Int
        let done: @Sendable (Result<Int32, Errno>) -> Void

        init(argv: [String], envp: [String], grace: Int, done: @escaping @Sendable (Result<Int32, Errno>) -> Void) {
            self.argv = argv
            self.envp = envp
            self.grace = grace
            self.done = done
        }

        func start() {
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            defer { pthread_attr_destroy(&attributes) }
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let started = pthread_create(&thread, &attributes, { raw in
                let this = Unmanaged<Thread>.fromOpaque(raw!).takeRetainedValue()
                this.done(this.spawnAndWait())
                return nil
            }, context)
            if started != 0 {
                Unmanaged<Thread>.fromOpaque(context).release()
                done(.failure(Errno(rawValue: started)))
            } else {
                pthread_detach(thread)
            }
        }

        private func spawnAndWait() -> Result<Int32, Errno> {
            let supervisor = withCStrings(argv) { argv in
                withCStrings(envp) { envp in cfolio_spawn_supervised("/usr/bin/env", argv, envp, Int32(grace)) }
            }
            guard supervisor > 0 else { return .failure(Errno(rawValue: errno)) }
            cfolio_forward_signals(supervisor)
            defer { cfolio_forward_signals(0) }
            var status: Int32 = 0
            while waitpid(supervisor, &status, 0) == -1 {
                guard errno == EINTR else { return .failure(Errno(rawValue: errno)) }
            }
            // The supervisor exits with the command's status; if it was itself killed, say so.
            let signal = status & 0x7f
            return .success(signal == 0 ? (status >> 8) & 0xff : 128 + signal)
        }
    }
}

/// Calls `body` with a NULL-terminated array of C strings for `strings`.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
