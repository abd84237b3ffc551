@testable import Folio
@testable import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The kernel can hand the two halves of a rename (IN_MOVED_FROM, IN_MOVED_TO) to two reads, most
/// often on a loaded machine. The presenter must still hear that its item moved, not that it changed
/// and vanished.
@Suite("Uncoordinated renames split across two reads", .elasticPool)
struct SplitRenameTests {
    final class Sink: ArbiterClient, @unchecked Sendable {
        private let lock = NSLock()
        private var heard: [String] = []
        func receive(_ outputs: [ArbiterOutput]) {
            lock.withLock {
                for case .presenter(_, let message, _) in outputs { heard.append("\(message)") }
            }
        }
        var messages: [String] { lock.withLock { heard } }
    }

    @Test func aRenameWhoseHalvesCameInTwoReadsIsAMove() throws {
        let dir = try TemporaryDirectory("split-rename")
        let from = try dir.write("f.txt", "x").path, to = dir.path + "/g.txt"
        var configuration = CoordinationArbiter.Configuration()
        configuration.watchesUncoordinatedChanges = false
        let arbiter = CoordinationArbiter(configuration: configuration)
        let sink = Sink()
        let client = arbiter.addClient(sink, pid: getpid(), name: "test")
        try arbiter.addPresenter(1, purpose: "p", path: from, client: client)
        #expect(rename(from, to) == 0)
        // The watcher's pairing, fed the halves as two reads (the kernel does so on a loaded machine).
        var pairing = InotifyMovePairing(window: .milliseconds(50))
        let watch = Inotify.Watch(rawValue: 1), folder = dir.path
        let directory: (Inotify.Watch) -> String? = { _ in folder }
        let start = ContinuousClock.now
        arbiter.externalChanges(pairing.add([.init(watch: watch, mask: .movedFrom, cookie: 77, name: "f.txt")], at: start, directory: directory))
        #expect(sink.messages.isEmpty)
        arbiter.externalChanges(
            pairing.add([.init(watch: watch, mask: .movedTo, cookie: 77, name: "g.txt")], at: start + .milliseconds(5), directory: directory))
        #expect(sink.messages.count == 1 && sink.messages.first?.contains("didMove") == true, "\(sink.messages)")

        // A first half whose second never comes (moved out of every watched folder) is a removal,
        // once the wait for its other half is over.
        #expect(rename(to, from) == 0)
        try arbiter.updatePresenter(1, path: from, client: client)
        let gone = dir.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: gone, withIntermediateDirectories: true)
        #expect(rename(from, gone + "/f.txt") == 0)
        let later = start + .seconds(1)
        arbiter.externalChanges(pairing.add([.init(watch: watch, mask: .movedFrom, cookie: 78, name: "f.txt")], at: later, directory: directory))
        #expect(sink.messages.count == 1)
        arbiter.externalChanges(pairing.expire(at: later + .milliseconds(50)))
        #expect(sink.messages.count == 2, "\(sink.messages)")
        #expect(sink.messages.last?.contains("didChange") == true, "\(sink.messages)")
    }
}
