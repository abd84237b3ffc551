import Folio
import Foundation
import FolioTesting
import FolioTestTraits
import Synchronization
import Testing

/// A client's callers read their own replies when no other thread reads, and a background thread
/// reads while none waits: every reply reaches its own caller, whichever thread read it, and the
/// daemon's unsolicited messages arrive in a process that makes no call.
@Suite("Daemon client: who reads the connection (real daemon)", .serialized, .elasticPool)
struct ClientReadingTests {
    /// Six threads and an async task share one connection; each reply names the type its caller
    /// asked for, so a reply handed to the wrong caller fails the test.
    @Test func everyReplyReachesItsOwnCaller() async throws {
        let dir = try TemporaryDirectory("reading")
        let daemon = try DaemonProcess(environment: dir.xdgEnvironment())
        defer { daemon.stop() }
        let engine = try DaemonCoordinationEngine(socketPath: try daemon.waitForListening(), app: nil)
        defer { engine.disconnect() }

        let types = ["public.plain-text", "public.json", "public.png", "public.jpeg", "public.html", "public.folder"]
        let mismatches = Mutex<[String]>([])
        let done = types.map { _ in DispatchSemaphore(value: 0) }
        for (type, finished) in zip(types, done) {
            Thread {
                defer { finished.signal() }
                for round in 0..<300 {
                    do {
                        let reply = try engine.send(TypesShow(type: type))
                        if reply.identifier != type { mismatches.withLock { $0.append("\(type) got \(reply)") } }
                    } catch {
                        mismatches.withLock { $0.append("\(type) round \(round): \(error)") }
                    }
                }
            }.start()
        }
        // Meanwhile async requests, which no caller reads for: the background thread or a waiting
        // caller must.
        for round in 0..<100 {
            let reply = try await engine.send(TypesShow(type: "public.data"))
            #expect(reply.identifier == "public.data", "async round \(round): \(reply)")
        }
        for semaphore in done {
            #expect(semaphore.wait(timeout: .now() + 120) == .success, "a caller thread did not finish")
        }
        #expect(mismatches.withLock { $0 }.isEmpty, "\(mismatches.withLock { $0.prefix(5) })")
    }

    /// After a burst of calls, this process calls nothing more; a presenter here still hears of
    /// another process's coordinated write (the background reader takes over from the callers).
    @Test func messagesArriveWhenNoCallerReads() async throws {
        let dir = try TemporaryDirectory("reading-events")
        let daemon = try DaemonProcess(environment: dir.xdgEnvironment())
        defer { daemon.stop() }
        let socket = try daemon.waitForListening()
        let engine = try DaemonCoordinationEngine(socketPath: socket, app: nil)
        defer { engine.disconnect() }
        let other = try DaemonCoordinationEngine(socketPath: socket, app: nil)
        defer { other.disconnect() }
        let file = try dir.write("watched.txt", "one")

        let presenter = ChangeCounter(url: file)
        FileCoordinator.addFilePresenter(presenter, engine: engine)
        defer { FileCoordinator.removeFilePresenter(presenter, engine: engine) }
        // The blocking form: these callers read their own replies.
        let call = { () throws -> WireValue in try engine.send(DaemonStatus()) }
        for _ in 0..<200 { #expect(try call()["clients"] != nil) }

        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: other).coordinate(writingItemAt: file, options: [], error: &error) { url in
            try? Data("two".utf8).write(to: url)
        }
        #expect(error == nil)
        #expect(await eventually { presenter.changes > 0 }, "the presenter heard nothing of the write")
    }
}

/// Counts `presentedItemDidChange` calls.
private final class ChangeCounter: FilePresenter, @unchecked Sendable {
    let presentedItemURL: URL?
    let presentedItemOperationQueue = OperationQueue()
    private let count = Mutex(0)

    init(url: URL) {
        presentedItemURL = url
        presentedItemOperationQueue.maxConcurrentOperationCount = 1
    }

    var changes: Int { count.withLock { $0 } }

    func presentedItemDidChange() { count.withLock { $0 += 1 } }
}
