#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Foundation

extension Process {
    /// Starts the process with no signal blocked. Foundation's `Process` hands its child the signal
    /// mask of the thread that starts it, and a dispatch worker's blocks nearly every signal: an
    /// Apache started from one never received the SIGTERM that stops it (each stop waited a second
    /// for SIGKILL, and a benchmark that exited within that second left Apache running).
    public func runWithNoSignalBlocked() throws {
        var nothing = sigset_t()
        var previous = sigset_t()
        sigemptyset(&nothing)
        pthread_sigmask(SIG_SETMASK, &nothing, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try run()
    }
}
