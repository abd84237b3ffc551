import ArgumentParser
import CFolioShims
import Folio
import FolioDaemon
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio daemon --background` and `--stop`: a daemon started and stopped from a shell, for
/// people without systemd's user manager (with it, the socket unit starts the daemon on demand).
enum DaemonControl {
    /// How long a daemon may take to listen, or to stop.
    static let deadline = Duration.seconds(30)

    /// Starts `folio daemon` with `arguments` in a session of its own, its output appended to
    /// `daemon.log` in the state folder (the previous run's kept as `daemon.log.1`), and returns
    /// once it says where it listens, repeating what it said. A daemon that ends first, or says
    /// nothing within the deadline, is a failure with its log's last lines.
    static func startInBackground(_ arguments: [String]) throws {
        let paths = FolioPaths()
        if let pid = DaemonLock.holder(paths: paths) {
            print("folio daemon already running (pid \(pid)), listening on unix:\(paths.socketPath)")
            return
        }
        try FileManager.default.createDirectory(atPath: paths.stateDirectory, withIntermediateDirectories: true)
        let log = paths.stateDirectory + "/daemon.log"
        _ = rename(log, log + ".1")
        let descriptor = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ValidationError("cannot write \(log): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        guard let child = SpawnedProcess([executable, "daemon"] + arguments, output: descriptor, errors: descriptor, newSession: true) else {
            throw ValidationError("cannot start \(executable)")
        }
        let started = ContinuousClock.now
        while ContinuousClock.now - started < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: "folio daemon listening on unix:") {
                // The line and the two after it (the index database, the data folder).
                let said = text[range.lowerBound...].split(separator: "\n", omittingEmptySubsequences: false).prefix(3)
                if said.count == 3 {
                    print(said.joined(separator: "\n"))
                    print("  log: \(log) (pid \(child.pid); `folio daemon --stop` stops it)")
                    return
                }
            }
            var status: Int32 = 0
            if waitpid(child.pid, &status, WNOHANG) == child.pid {
                printError("folio daemon: it stopped before it listened; the end of \(log):")
                printError(text.split(separator: "\n").suffix(10).joined(separator: "\n"))
                throw ExitCode.failure
            }
            usleep(20_000)
        }
        printError("folio daemon: it did not listen within \(deadline); see \(log)")
        throw ExitCode.failure
    }

    /// Sends SIGTERM to the daemon holding the user's lock and returns once the process has ended
    /// (its lock goes earlier, while it unmounts and flushes). The process is named by a pidfd
    /// taken before the signal, so a process id used again meanwhile is never waited for; where
    /// the kernel has no pidfd (before Linux 5.3), the lock's going is what is waited for.
    static func stop() throws {
        let paths = FolioPaths()
        guard let pid = DaemonLock.holder(paths: paths) else {
            print("no folio daemon is running")
            return
        }
        let process = cfolio_pidfd_open(pid)
        defer { if process >= 0 { close(process) } }
        guard kill(pid, SIGTERM) == 0 else {
            throw ValidationError("cannot stop the daemon (pid \(pid)): \(String(cString: strerror(errno)))")
        }
        let started = ContinuousClock.now
        func timedOut() throws -> Never {
            printError("folio daemon: pid \(pid) did not stop within \(deadline) of SIGTERM")
            throw ExitCode.failure
        }
        if process >= 0 {
            while true {
                let left = deadline - (ContinuousClock.now - started)
                guard left > .zero else { try timedOut() }
                var ended = pollfd(fd: process, events: Int16(POLLIN), revents: 0)
                let ready = poll(&ended, 1, Int32(min(1000, (left / .milliseconds(1)).rounded(.up))))
                if ready > 0 { break }
                guard ready == 0 || errno == EINTR else {
                    throw ValidationError("cannot wait for the daemon (pid \(pid)): \(String(cString: strerror(errno)))")
                }
            }
        } else {
            while DaemonLock.holder(paths: paths) != nil {
                guard ContinuousClock.now - started < deadline else { try timedOut() }
                usleep(20_000)
            }
        }
        print("folio daemon stopped (pid \(pid))")
    }
}
