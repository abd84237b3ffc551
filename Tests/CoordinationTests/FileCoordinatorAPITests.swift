@testable import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// A presenter that records its callbacks, for API tests in this process.
final class RecordingPresenter: FilePresenter, @unchecked Sendable {
    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    private let lock = NSLock()
    private var url: URL?
    private var log: [String] = []
    let observedPresentedItemUbiquityAttributes: Set<URLResourceKey>

    init(_ url: URL, observing: Set<URLResourceKey> = []) {
        self.url = url
        observedPresentedItemUbiquityAttributes = observing
    }

    var presentedItemURL: URL? { lock.withLock { url } }
    var callbacks: [String] { lock.withLock { log } }
    private func note(_ text: String) { lock.withLock { log.append(text) } }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        note("save")
        completionHandler(nil)
    }
    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        note("relinquishToReader")
        reader(nil)
    }
    func presentedItemDidChangeUbiquityAttributes(_ attributes: Set<URLResourceKey>) {
        note("ubiquity:" + attributes.map(\.rawValue).sorted().joined(separator: ","))
    }

    /// Waits until the presenter's queue has run everything queued so far.
    func settle() { presentedItemOperationQueue.waitUntilAllOperationsAreFinished() }
}

@Suite("FileCoordinator API (in process)", .elasticPool)
struct FileCoordinatorAPITests {
    @Test func asyncFormsReturnTheAccessorsValue() async throws {
        let dir = try TemporaryDirectory("api")
        let url = URL(fileURLWithPath: dir.path + "/note.txt")
        try Data("hello".utf8).write(to: url)
        let engine = LocalCoordinationEngine()
        let coordinator = FileCoordinator(filePresenter: nil, engine: engine)
        let text = try await coordinator.coordinate(readingItemAt: url) { url in try String(contentsOf: url, encoding: .utf8) }
        #expect(text == "hello")
        let copy = URL(fileURLWithPath: dir.path + "/copy.txt")
        try await coordinator.coordinate(readingItemAt: url, writingItemAt: copy) { from, to in
            try FileManager.default.copyItem(at: from, to: to)
        }
        #expect(try String(contentsOf: copy, encoding: .utf8) == "hello")
        let intents = [FileAccessIntent.readingIntent(with: url), .writingIntent(with: copy, options: .forDeleting)]
        try await coordinator.coordinate(with: intents) { try FileManager.default.removeItem(at: intents[1].url) }
        #expect(!FileManager.default.fileExists(atPath: copy.path))
    }

    /// A file whose write claim another coordinator holds while `body` runs.
    private func withHeldFile(_ body: (URL, LocalCoordinationEngine) async throws -> Void) async throws {
        let dir = try TemporaryDirectory("api")
        let url = URL(fileURLWithPath: dir.path + "/f.txt")
        try Data("x".utf8).write(to: url)
        let engine = LocalCoordinationEngine()
        let holder = FileCoordinator(filePresenter: nil, engine: engine)
        let held = try holder.acquire([.init(url: url, access: .write([]))], multiItem: false)
        defer { holder.finish(held) }
        try await body(url, engine)
    }

    @Test func cancellingTheTaskCancelsAWaitingCoordination() async throws {
        try await withHeldFile { url, engine in
            let task = Task {
                try await FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: url) { _ in "ran" }
            }
            // Cancelled once its claim waits behind the held one (not before the claim exists).
            let waiting = await eventually {
                (engine.arbiter.status()["claims"]?.arrayValue ?? []).contains { $0["state"]?.stringValue == "waiting" }
            }
            #expect(waiting, "the coordination never waited: \(engine.arbiter.status())")
            task.cancel()
            await #expect(throws: CocoaError.self) { try await task.value }
            do {
                _ = try await task.value
            } catch let error as CocoaError {
                #expect(error.code == .userCancelled)
            }
        }
    }

    @Test func aTaskCancelledBeforeItsClaimExistsStillCancels() async throws {
        try await withHeldFile { url, engine in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }  // cancelled before the coordination starts
                return try await FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: url) { _ in "ran" }
            }
            await #expect(throws: CocoaError.self) { try await task.value }
        }
    }

    @Test func presenterRegistryAndUbiquityAttributes() async throws {
        let dir = try TemporaryDirectory("api")
        let url = URL(fileURLWithPath: dir.path + "/f.txt")
        try Data("x".utf8).write(to: url)
        let downloading = URLResourceKey(rawValue: "NSURLUbiquitousItemIsDownloadingKey")
        let uploaded = URLResourceKey(rawValue: "NSURLUbiquitousItemIsUploadedKey")
        let presenter = RecordingPresenter(url, observing: [downloading])
        await CoordinationEngine.$override.withValue(LocalCoordinationEngine()) {
            FileCoordinator.addFilePresenter(presenter)
            #expect(FileCoordinator.filePresenters.count == 1)
            #expect(FileCoordinator.filePresenters.first === presenter)
            FileCoordinator().item(at: url, didChangeUbiquityAttributes: [downloading, uploaded])
            // One report, for both keys: once it is heard, the presenter has heard all it will.
            #expect(await eventually(10) { !presenter.callbacks.isEmpty })
            presenter.settle()
            #expect(presenter.callbacks == ["ubiquity:NSURLUbiquitousItemIsDownloadingKey"])
            FileCoordinator.removeFilePresenter(presenter)
            #expect(FileCoordinator.filePresenters.isEmpty)
        }
    }

    @Test func prepareMessagesContentsOnceAndInnerCoordinationsProceed() throws {
        let dir = try TemporaryDirectory("api")
        try FileManager.default.createDirectory(atPath: dir.path + "/D", withIntermediateDirectories: true)
        let inner = URL(fileURLWithPath: dir.path + "/D/x.txt")
        try Data("x".utf8).write(to: inner)
        let engine = LocalCoordinationEngine()
        let presenter = RecordingPresenter(inner)
        FileCoordinator.addFilePresenter(presenter, engine: engine)
        let coordinator = FileCoordinator(filePresenter: nil, engine: engine)
        var error: NSError?
        var innerRan = false
        coordinator.prepare(forReadingItemsAt: [URL(fileURLWithPath: dir.path + "/D")], writingItemsAt: [], error: &error) { done in
            var innerError: NSError?
            coordinator.coordinate(readingItemAt: inner, options: [], error: &innerError) { _ in innerRan = true }
            #expect(innerError == nil)
            done()
        }
        #expect(error == nil && innerRan)
        presenter.settle()
        #expect(presenter.callbacks == ["save", "relinquishToReader"])
        // The prepared claim ended with the completion handler: another coordinator writes freely.
        var writerRan = false
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: inner, options: [], error: &error) { _ in
            writerRan = true
        }
        #expect(writerRan)
        FileCoordinator.removeFilePresenter(presenter, engine: engine)
    }

    @Test func uploadingAFileGivesACopyAndFailuresNeedNoErrorPointer() throws {
        let dir = try TemporaryDirectory("api")
        let url = URL(fileURLWithPath: dir.path + "/f.txt")
        try Data("contents".utf8).write(to: url)
        let engine = LocalCoordinationEngine()
        var error: NSError?
        var snapshot: URL?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(readingItemAt: url, options: .forUploading, error: &error) { copy in
            snapshot = copy
            #expect((try? String(contentsOf: copy, encoding: .utf8)) == "contents")
        }
        #expect(error == nil && snapshot != nil && snapshot != url)
        #expect(!FileManager.default.fileExists(atPath: snapshot!.path))
        // A failing coordination with no error pointer neither runs the accessor nor crashes.
        let missing = URL(fileURLWithPath: dir.path + "/missing")
        var ran = false
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(readingItemAt: missing, options: .forUploading, error: nil) { _ in
            ran = true
        }
        #expect(!ran)
    }

    /// A coordinator's own purpose is a UUID string, stable for the coordinator and different from
    /// every other coordinator's.
    @Test func defaultPurposesAreDistinctUUIDs() {
        let coordinators = (0..<1000).map { _ in FileCoordinator() }
        let purposes = coordinators.map(\.purposeIdentifier)
        #expect(Set(purposes).count == purposes.count)
        #expect(purposes.allSatisfy { UUID(uuidString: $0)?.uuidString == $0 }, "\(purposes.prefix(3))")
        #expect(coordinators[0].purposeIdentifier == purposes[0])
    }

    @Test func settingThePurposeTwiceIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            let coordinator = FileCoordinator()
            coordinator.purposeIdentifier = "com.example.one"
            coordinator.purposeIdentifier = "com.example.two"
        }
    }
}

@Suite("Coordination paths", .elasticPool)
struct CoordinationPathTests {
    @Test func normalization() {
        let cases: [(String, String)] = [
            ("/", "/"), ("/a/b", "/a/b"), ("/a/b/", "/a/b"), ("//a//b", "/a/b"), ("/a/./b", "/a/b"), ("/a/../b", "/b"),
            ("/..", "/"), ("/a/.b", "/a/.b"), ("/a/..b", "/a/..b"), ("/a/...", "/a/..."), ("/a/.", "/a"), ("/a/..", "/"),
        ]
        for (input, expected) in cases {
            #expect(CoordinationPath.normalize(input) == expected, "\(input)")
            #expect(CoordinationPath.isNormalized(input) == (input == expected), "\(input)")
        }
        #expect(CoordinationPath.normalize("b/c", base: "/a") == "/a/b/c")
    }
}
