@testable import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import Logging
import Synchronization
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

@Suite("InotifyWatcher", .elasticPool)
struct InotifyWatcherTests {
    /// Everything a watcher's sequence delivered so far, gathered by a task of its own, on the
    /// tests' elastic pool: Swift's cooperative pool has as many threads as processors, and a
    /// suite that runs there (`UTTypeTests`, on purpose) can hold them all in the wait for the
    /// type database's first load, seconds under AddressSanitizer.
    final class Collector: Sendable {
        private let received = Mutex<[InotifyWatcher.Event]>([])

        init(_ watcher: InotifyWatcher) {
            Task(executorPreference: ElasticPoolTrait.executor) {
                for await batch in watcher.events { self.received.withLock { $0 += batch } }
            }
        }

        var events: [InotifyWatcher.Event] { received.withLock { $0 } }

        /// True as soon as `event` was delivered.
        func saw(_ event: InotifyWatcher.Event) async -> Bool {
            await eventually(10) { self.events.contains(event) }
        }
    }

    /// A value shared with escaping closures.
    final class Shared<Value: Sendable>: Sendable {
        private let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
        var value: Value { mutex.withLock { $0 } }
        func update(_ body: (inout Value) -> Void) { mutex.withLock { body(&$0) } }
    }

    /// Keeps log records for the test to read.
    struct RecordingLogHandler: LogHandler {
        let records: Shared<[LogEvent]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        func log(event: LogEvent) { records.update { $0.append(event) } }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
    }

    static let logger = Logger(label: "test.inotify")

    private func create(_ path: String, _ text: String = "x") {
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    @Test func reportsCreationChangeAndDeletion() async throws {
        let dir = try TemporaryDirectory("inotify")
        let watcher = try InotifyWatcher(logger: Self.logger)
        defer { watcher.stop() }
        #expect(watcher.watch(dir.path))
        #expect(watcher.watchedDirectories == [dir.path] && watcher.watchCount == 1)
        let collector = Collector(watcher)
        let file = dir.path + "/a.txt"
        create(file)
        #expect(await collector.saw(.created(file)))
        #expect(await collector.saw(.modified(file)))
        #expect(unlink(file) == 0)
        #expect(await collector.saw(.deleted(file)))
        #expect(collector.events.firstIndex(of: .created(file))! < collector.events.firstIndex(of: .deleted(file))!)
    }

    @Test func pairsARenameWithinADirectory() async throws {
        let dir = try TemporaryDirectory("inotify")
        let from = try dir.write("old.txt", "x").path, to = dir.path + "/new.txt"
        let watcher = try InotifyWatcher(logger: Self.logger)
        defer { watcher.stop() }
        watcher.watch(dir.path)
        let collector = Collector(watcher)
        #expect(rename(from, to) == 0)
        #expect(await collector.saw(.moved(from: from, to: to)))
        #expect(!collector.events.contains(.movedOut(from)) && !collector.events.contains(.movedIn(to)))
    }

    @Test func pairsARenameAcrossDirectories() async throws {
        let dir = try TemporaryDirectory("inotify")
        let from = try dir.write("one/f.txt", "x").path, to = dir.path + "/two/g.txt"
        try FileManager.default.createDirectory(atPath: dir.path + "/two", withIntermediateDirectories: true)
        let watcher = try InotifyWatcher(logger: Self.logger)
        defer { watcher.stop() }
        watcher.watch(dir.path + "/one")
        watcher.watch(dir.path + "/two")
        let collector = Collector(watcher)
        #expect(rename(from, to) == 0)
        #expect(await collector.saw(.moved(from: from, to: to)))
    }

    @Test func reportsMovesOutOfAndIntoTheWatchedDirectories() async throws {
        let dir = try TemporaryDirectory("inotify")
        let inside = try dir.write("watched/f.txt", "x").path, outside = dir.path + "/elsewhere/f.txt"
        try FileManager.default.createDirectory(atPath: dir.path + "/elsewhere", withIntermediateDirectories: true)
        let watcher = try InotifyWatcher(logger: Self.logger)
        defer { watcher.stop() }
        watcher.watch(dir.path + "/watched")
        let collector = Collector(watcher)
        #expect(rename(inside, outside) == 0)
        // The first half waits for its second (50 ms), then counts as a move out.
        #expect(await collector.saw(.movedOut(inside)))
        #expect(rename(outside, inside) == 0)
        #expect(await collector.saw(.movedIn(inside)))
    }

    @Test func handlerFormDeliversOnTheWatchersThread() async throws {
        let dir = try TemporaryDirectory("inotify")
        let received = Shared<[InotifyWatcher.Event]>([])
        let watcher = try InotifyWatcher(logger: Self.logger) { batch in received.update { $0 += batch } }
        defer { watcher.stop() }
        watcher.watch(dir.path)
        let file = dir.path + "/h.txt"
        create(file)
        #expect(await eventually(10) { received.value.contains(.created(file)) })
        // The handler form has no sequence.
        var none = watcher.events.makeAsyncIterator()
        #expect(await none.next() == nil)
    }

    @Test func logsAWatchThatCannotBeMade() throws {
        let dir = try TemporaryDirectory("inotify")
        let records = Shared<[LogEvent]>([])
        let logger = Logger(label: "test.inotify") { _ in RecordingLogHandler(records: records) }
        let watcher = try InotifyWatcher(logger: logger)
        defer { watcher.stop() }
        let missing = dir.path + "/missing"
        #expect(!watcher.watch(missing))
        #expect(watcher.watchCount == 0)
        let logged = records.value
        let record = try #require(logged.first)
        #expect(logged.count == 1)
        #expect(record.level == .notice)
        #expect(record.metadata?["path"] == "\(missing)")
        #expect(record.metadata?["error"]?.description.contains("No such file") == true, "\(record.metadata ?? [:])")
    }

    @Test func stoppingEndsTheSequence() async throws {
        let watcher = try InotifyWatcher(logger: Self.logger)
        let ended = Shared(false)
        Task(executorPreference: ElasticPoolTrait.executor) {
            for await _ in watcher.events {}
            ended.update { $0 = true }
        }
        watcher.stop()
        #expect(await eventually(10) { ended.value })
        #expect(!watcher.watch(NSTemporaryDirectory()))
    }

    /// A consumer that does not keep up holds the watcher's thread (back-pressure): the kernel's
    /// queue fills, drops events, and the sequence reports the overflow once the consumer reads.
    @Test(.enabled(if: InotifyWatcherTests.queueLimit.map { $0 <= 100_000 } ?? false))
    func reportsAQueueOverflowWhenTheConsumerFallsBehind() async throws {
        let dir = try TemporaryDirectory("inotify-overflow")
        let watcher = try InotifyWatcher(logger: Self.logger)
        defer { watcher.stop() }
        watcher.watch(dir.path)
        // More events than the batches the watcher holds and the kernel's queue together.
        let files = Self.queueLimit! + InotifyWatcher.bufferedBatches * 4096
        for index in 0..<files { close(open(dir.path + "/f\(index)", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)) }
        let collector = Collector(watcher)
        #expect(await collector.saw(.overflow))
    }

    /// The kernel's queue length (`fs.inotify.max_queued_events`).
    static let queueLimit: Int? = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
        .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
}
