#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// A child started from a thread that blocks signals and ignores SIGPIPE (a dispatch worker, this
/// process) starts with none blocked and each at its default action.
@Suite("Spawned processes' signals", .elasticPool)
struct SpawnedProcessTests {
    /// Runs `body` with SIGTERM and SIGINT blocked on this thread and SIGPIPE ignored in the process,
    /// as a dispatch worker of a NIO program has them.
    static func blocking<T>(_ body: () throws -> T) rethrows -> T {
        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGINT)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let pipeAction = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, pipeAction) }
        return try body()
    }

    /// The exit status of `pid` once it ends, or nil when it is still running after `limit` (it is then killed).
    static func status(of pid: Int32, within limit: Duration) -> Int32? {
        let deadline = ContinuousClock.now + limit
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return nil
    }

    @Test func aChildStartedWhereSIGTERMIsBlockedStillReceivesIt() throws {
        let child = try #require(Self.blocking { SpawnedProcess(["/bin/sleep", "30"]) })
        // The mask the child runs with, as the kernel shows it: SIGTERM (15) is bit 14.
        let status = try String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8)
        let blockedLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
        let blocked = try #require(UInt64(blockedLine.split(separator: "\t").last ?? "", radix: 16))
        #expect(blocked & (1 << 14) == 0, "\(blockedLine)")
        kill(child.pid, SIGTERM)
        #expect(Self.status(of: child.pid, within: .seconds(10)) == 128 + SIGTERM)
    }

    /// A child writing to a pipe nobody reads ends by SIGPIPE, as in a terminal, though this
    /// process ignores it.
    @Test func aChildWritingToAClosedPipeEndsBySIGPIPE() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        let writer = try #require(Self.blocking { SpawnedProcess(["/usr/bin/yes"], output: ends[1]) })
        close(ends[1])
        #expect(Self.status(of: writer.pid, within: .seconds(10)) == 128 + SIGPIPE)
    }

    /// A child gets only its standard descriptors and the ones passed to it: a descriptor this
    /// process opened without close-on-exec (as Foundation's `Process` keeps a socket to each of
    /// its children) does not live on in it. `folio daemon --background`, started from a Foundation
    /// parent, kept that parent's socket in the daemon, and the parent waited for the daemon to end.
    @Test func aChildInheritsNoDescriptorButThosePassed() throws {
        var stray: [Int32] = [-1, -1]
        #expect(pipe(&stray) == 0)
        var passed: [Int32] = [-1, -1]
        #expect(pipe(&passed) == 0)
        defer { for descriptor in stray + passed { close(descriptor) } }
        let folder = try TemporaryDirectory("spawn-descriptors")
        let listing = folder.child("fds").path
        let output = open(listing, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(output) }
        let child = try #require(SpawnedProcess(["/bin/sh", "-c", "ls /proc/$$/fd"], output: output, passing: [(passed[1], Int32(5))]))
        #expect(Self.status(of: child.pid, within: .seconds(10)) == 0)
        let descriptors = Set(try String(contentsOfFile: listing, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) })
        // sh's own: 0, 1, 2, the passed 5, and the one `ls`'s redirection may leave.
        #expect(descriptors.isSuperset(of: [0, 1, 2, 5]), "\(descriptors.sorted())")
        #expect(descriptors.isDisjoint(with: stray + passed), "inherited: \(descriptors.intersection(stray + passed).sorted())")
    }
}
