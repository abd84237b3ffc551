import Folio
import Foundation
import FolioTesting
import FolioTestTraits
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The daemon's core never stalls: a request that blocks holds up only its own connection, and a
/// daemon that stops answering gives its clients a clear error within their deadlines.
@Suite("Daemon core: blocking requests and deadlines (real processes)", .serialized, .elasticPool)
struct BlockingRequestTests {
    /// Another process holds SQLite's write lock on the daemon's database, so a grant (a write to
    /// the grant table) waits in the daemon. Meanwhile other clients say hello, read the status and
    /// coordinate; the waiting connection's own later request waits behind its grant.
    @Test func aRequestWaitingForTheDatabaseHoldsUpNoOtherClient() throws {
        let dir = try TemporaryDirectory("blocking")
        let env = dir.xdgEnvironment()
        let manifest = try dir.write("Info.plist", particlesPlist)
        #expect(try ProcessRunner.folio(["app", "register", manifest.path], environment: env).status == 0)
        let document = try dir.write("doc.particles", "{}")
        let daemon = try DaemonProcess(environment: env)
        defer { daemon.stop() }
        let socket = try daemon.waitForListening()

        let holder = try DatabaseLockHolder(database: dir.path + "/state/folio/index.sqlite")
        defer { holder.release() }

        let waiting = try RawClient(socket: socket)
        #expect(waiting.call(#"{"id":1,"method":"hello"}"#).contains(#""protocol":1"#))
        waiting.send(
            #"{"id":2,"method":"grant.add","params":{"app":"com.example.Particles","path":"\#(document.path)","write":true}}"# + "\n"
                + #"{"id":3,"method":"status"}"# + "\n")

        // Other clients are served in full while the grant waits for the lock: one more than the
        // daemon has event loops (one per core), so at least one shares the waiting one's loop.
        for _ in 0...ProcessInfo.processInfo.activeProcessorCount {
            let other = try RawClient(socket: socket)
            #expect(other.call(#"{"id":1,"method":"hello"}"#).contains(#""protocol":1"#))
            #expect(other.call(#"{"id":2,"method":"status"}"#).contains(#""id":2,"result""#))
            let claim = #"{"id":3,"method":"claim","params":{"purpose":"p","items":[{"path":"\#(document.path)","access":"write","options":0}]}}"#
            #expect(other.call(claim).contains(#""paths":["\#(document.path)"]"#))
            other.send(#"{"method":"release","params":{"claim":3}}"# + "\n")
            #expect(other.call(#"{"id":4,"method":"status"}"#).contains(#""id":4,"result""#))
        }

        // Only now may the grant proceed: it cannot have answered while the lock was held.
        #expect(!waiting.hasReplyWaiting)
        holder.release()
        let granted = waiting.line() ?? "<none>"
        #expect(granted.contains(#""id":2,"result""#), "\(granted)")
        #expect(granted.contains("com.example.Particles"))
        // The connection's later request came after its grant, in order.
        #expect(waiting.line()?.contains(#""id":3,"result""#) == true)
    }

    /// A daemon that stops (SIGSTOP) answers nothing: connecting, hello and requests each end with
    /// a clear error at their deadline, for the blocking and the async request alike.
    @Test func aDaemonThatHangsGivesAClearErrorNotAHang() async throws {
        let dir = try TemporaryDirectory("hung")
        var env = dir.xdgEnvironment()
        let daemon = try DaemonProcess(environment: env)
        defer { daemon.stop() }
        let socket = try daemon.waitForListening()
        let engine = try DaemonCoordinationEngine(socketPath: socket, app: nil, requestTimeout: .seconds(1))
        #expect(try blockingStatus(engine)["clients"] != nil)

        let pid = daemon.process.processIdentifier
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        #expect(await eventually(10) { processState(pid) == "T" }, "the daemon did not stop")
        do {
            let reply = try blockingStatus(engine)
            Issue.record("a request to a stopped daemon (state \(processState(pid) ?? "?")) returned \(reply)")
        } catch {
            #expect(error.kind == .timedOut)
            #expect(error.message.contains("did not answer status within"))
        }
        do {
            _ = try await engine.send(DaemonStatus())
            Issue.record("an async request to a stopped daemon returned")
        } catch {
            #expect(error.kind == .timedOut)
        }

        // A new process: the kernel accepts its connection, but hello goes unanswered.
        env["FOLIO_CONNECT_TIMEOUT"] = "1"
        env["FOLIO_COORDINATION"] = "daemon"
        let status = try ProcessRunner.folio(["status"], environment: env)
        #expect(status.status != 0)
        #expect(status.stderr.contains("did not answer hello within"), "\(status.stderr)")

        kill(pid, SIGCONT)
        // Resumed, the daemon answers the same connection again.
        #expect(try await engine.send(DaemonStatus())["clients"] != nil)
        engine.disconnect()
    }
}

/// The state letter of process `pid` in /proc (`T` when stopped).
private func processState(_ pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
}

/// A request through the blocking form (an async caller would get the async one).
private func blockingStatus(_ engine: DaemonCoordinationEngine) throws(CoordinationFailure) -> WireValue {
    try engine.send(DaemonStatus())
}

/// Another process holding SQLite's write lock on a database (`BEGIN EXCLUSIVE` in Python's sqlite3)
/// until released.
final class DatabaseLockHolder: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(database: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
            c.execute('BEGIN EXCLUSIVE')
            print('locked', flush=True)
            sys.stdin.read()
            c.execute('ROLLBACK')
            """,
            database,
        ]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard line.contains("locked") else { throw TestFailure("the lock holder did not take the lock: \(line)") }
    }

    /// Lets the lock go (ends the process); once is enough.
    func release() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
