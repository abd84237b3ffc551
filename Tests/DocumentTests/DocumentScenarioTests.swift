@testable import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

/// A folder, an in-process coordination engine and a private version store for one test; documents
/// made through it use both.
struct DocumentWorld {
    let directory: TemporaryDirectory
    let engine = LocalCoordinationEngine()
    let store: VersionStore

    init() throws {
        directory = try TemporaryDirectory("documents")
        store = VersionStore(directory: directory.path + "/store")
    }

    func url(_ name: String) -> URL { URL(fileURLWithPath: directory.path + "/" + name) }

    func file(_ name: String, _ text: String) throws -> URL {
        let url = url(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    func document(_ url: URL) -> TextDocument {
        CoordinationEngine.$override.withValue(engine) {
            VersionStore.$override.withValue(store) { TextDocument(fileURL: url) }
        }
    }

    func versions(_ url: URL) throws -> [FileVersion] {
        try FileVersion.versions(ofItemAt: url, store: store)
    }

    func coordinator() -> FileCoordinator { FileCoordinator(filePresenter: nil, engine: engine) }
}

/// Counts a document's state notifications.
final class StateCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var token: (any NSObjectProtocol)?

    init(_ document: Document) {
        token = NotificationCenter.default.addObserver(forName: Document.stateChangedNotification, object: document, queue: nil) {
            [weak self] _ in self?.lock.withLock { self?.count += 1 }
        }
    }

    var value: Int { lock.withLock { count } }
    deinit { if let token { NotificationCenter.default.removeObserver(token) } }
}

@Suite("Document: apple-semantics §9 23–31 (in process)", .elasticPool)
struct DocumentScenarioTests {
    /// 23. Closed, then normal after open, closed after close; one notification per transition.
    @Test func stateTransitions() async throws {
        let world = try DocumentWorld()
        let document = world.document(try world.file("note.txt", "hello"))
        #expect(document.documentState == .closed)
        let counter = StateCounter(document)
        #expect(await document.open())
        #expect(document.documentState == .normal)
        #expect(counter.value == 1)
        #expect(await document.close())
        #expect(document.documentState == .closed)
        #expect(counter.value == 2)
    }

    /// 24. A flat file loads as Data, a package as a FileWrapper; the type comes from the extension.
    /// The save's type and extension, as UIDocument's defaults give them.
    @Test func savingTypeAndExtension() throws {
        let world = try DocumentWorld()
        let document = world.document(try world.file("note.txt", "hello"))
        #expect(document.savingFileType() == "public.plain-text")
        #expect(document.fileNameExtension(forType: "public.json", saveOperation: .forCreating) == "json")
        #expect(document.fileNameExtension(forType: nil, saveOperation: .forOverwriting) == "txt")
        #expect(document.progress == nil)
    }

    @Test func loadGetsDataOrAFileWrapper() async throws {
        let world = try DocumentWorld()
        let flat = world.document(try world.file("note.txt", "hello"))
        #expect(await flat.open())
        #expect(flat.loadedKinds == ["Data"] && flat.loadedTypes == ["public.plain-text"] && flat.text == "hello")
        let package = world.url("Story.rtfd")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try Data("rich".utf8).write(to: package.appendingPathComponent("TXT.rtf"))
        let packaged = world.document(package)
        #expect(await packaged.open())
        #expect(packaged.loadedKinds == ["FileWrapper"] && packaged.loadedTypes == ["com.apple.rtfd"] && packaged.text == "rich")
    }

    /// 25. Change counting; a change during an in-flight save stays unsaved.
    @Test func changeCountingAcrossASave() async throws {
        let world = try DocumentWorld()
        let url = try world.file("note.txt", "v0")
        let document = world.document(url)
        // Only the explicit save below writes (no autosave stepping in on a slow machine).
        document.autosaveDelay = .seconds(600)
        document.autosaveMaximumDelay = .seconds(600)
        #expect(await document.open())
        document.updateChangeCount(.done)
        #expect(document.hasUnsavedChanges)
        document.updateChangeCount(.cleared)
        #expect(!document.hasUnsavedChanges)
        document.edit("v1")
        document.writeDelay = 300_000
        let before = document.writesStarted
        async let saved = document.save(to: url, for: .forOverwriting)
        // Whatever the load, the edit lands while the write is under way (it takes 300 ms). The wait
        // suspends rather than blocks, so the save's own tasks get a thread.
        let deadline = ContinuousClock.now + .seconds(30)
        while document.writesStarted == before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(document.writesStarted > before)
        document.edit("v2")  // during the save
        #expect(await saved)
        #expect(document.hasUnsavedChanges)
        #expect(try String(contentsOf: url, encoding: .utf8) == "v1")
    }

    /// 26. Closing with unsaved changes writes them first.
    @Test func closeSavesUnsavedChanges() async throws {
        let world = try DocumentWorld()
        let url = try world.file("note.txt", "before")
        let document = world.document(url)
        #expect(await document.open())
        document.edit("after")
        #expect(await document.close())
        #expect(try String(contentsOf: url, encoding: .utf8) == "after")
    }

    /// 27. A coordinated reader sees only whole old or whole new contents while the document saves.
    @Test func savesAreAtomicForCoordinatedReaders() async throws {
        let world = try DocumentWorld()
        let old = String(repeating: "o", count: 200_000), new = String(repeating: "n", count: 200_000)
        let url = try world.file("big.txt", old)
        let document = world.document(url)
        #expect(await document.open())
        let reader = Task(executorPreference: ElasticPoolTrait.executor) {
            var seen = Set<String>()
            for _ in 0..<200 {
                var error: NSError?
                world.coordinator().coordinate(readingItemAt: url, options: .withoutChanges, error: &error) { url in
                    seen.insert((try? String(contentsOf: url, encoding: .utf8)).map { String($0.prefix(1)) + "\($0.count)" } ?? "unreadable")
                }
            }
            return seen
        }
        for round in 0..<10 {
            document.edit(round.isMultiple(of: 2) ? new : old)
            #expect(await document.autosave())
        }
        let seen = await reader.value
        #expect(seen.isSubset(of: ["o200000", "n200000"]), "\(seen)")
    }

    /// 28. A reader that does not pass `.withoutChanges` makes a document with unsaved changes save
    /// first, so it reads the edit.
    @Test func readersSeeUnsavedEdits() async throws {
        let world = try DocumentWorld()
        let url = try world.file("note.txt", "on disk")
        let document = world.document(url)
        #expect(await document.open())
        document.edit("in memory")
        var read = ""
        var error: NSError?
        world.coordinator().coordinate(readingItemAt: url, options: [], error: &error) { url in
            read = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        }
        #expect(error == nil && read == "in memory")
        #expect(await eventually(5) { !document.hasUnsavedChanges })
    }

    /// 29. A coordinated move updates `fileURL`.
    @Test func movesUpdateTheFileURL() async throws {
        let world = try DocumentWorld()
        let url = try world.file("draft.txt", "x")
        let moved = world.url("final.txt")
        let document = world.document(url)
        #expect(await document.open())
        var error: NSError?
        let coordinator = world.coordinator()
        coordinator.coordinate(writingItemAt: url, options: .forMoving, writingItemAt: moved, options: .forReplacing, error: &error) {
            from, to in
            try? FileManager.default.moveItem(at: from, to: to)
            coordinator.item(at: from, didMoveTo: to)
        }
        #expect(await eventually(5) { document.fileURL.path == moved.path })
        document.edit("saved at the new place")
        #expect(await document.autosave())
        #expect(try String(contentsOf: moved, encoding: .utf8) == "saved at the new place")
    }

    /// 30. Revert disables then enables editing, drops unsaved changes and reloads the disk.
    @Test func revertReloads() async throws {
        let world = try DocumentWorld()
        let url = try world.file("note.txt", "disk")
        let document = world.document(url)
        #expect(await document.open())
        document.edit("unsaved")
        #expect(await document.revert(toContentsOf: url))
        #expect(document.text == "disk" && !document.hasUnsavedChanges)
        #expect(document.editingCalls == ["disable", "enable"])
    }

    /// 31. Unresolved conflicts show as `.inConflict`; the canonical resolution clears it.
    @Test func conflictsAndTheirResolution() async throws {
        let world = try DocumentWorld()
        let url = try world.file("plan.txt", "base")
        let document = world.document(url)
        #expect(await document.open())
        // Another writer changes the file (coordinated, with different bytes) while the document
        // has unsaved changes: both sides are kept.
        var error: NSError?
        world.coordinator().coordinate(writingItemAt: url, options: [], error: &error) { url in
            try? Data("theirs".utf8).write(to: url)
        }
        document.edit("mine")
        #expect(await eventually(5) { document.documentState.contains(.inConflict) })
        #expect(await document.autosave())
        #expect(try String(contentsOf: url, encoding: .utf8) == "mine")
        let conflicts = try world.versions(url).filter { $0.isConflict && !$0.isResolved }
        #expect(try conflicts.map { try String(contentsOf: $0.url, encoding: .utf8) } == ["theirs"])
        // Resolution: remove the others, mark resolved, revert.
        world.coordinator().coordinate(writingItemAt: url, options: [], error: &error) { url in
            for version in conflicts { version.isResolved = true }
            try? world.store.removeAll(ofItemAt: url.path)
        }
        #expect(await document.revert(toContentsOf: url))
        #expect(!document.documentState.contains(.inConflict))
    }

    /// A save whose base changed, but where the other writer wrote the very same bytes, is no conflict.
    @Test func identicalContentsAreNoConflict() async throws {
        let world = try DocumentWorld()
        let url = try world.file("plan.txt", "base")
        let document = world.document(url)
        #expect(await document.open())
        document.edit("same")
        // Uncoordinated, so the document cannot have reloaded first.
        let fd = Glibc.open(url.path, O_WRONLY | O_TRUNC)
        _ = "same".withCString { Glibc.write(fd, $0, 4) }
        Glibc.close(fd)
        #expect(await document.autosave())
        #expect(!document.documentState.contains(.inConflict))
        #expect(try world.versions(url).filter(\.isConflict).isEmpty)
    }
}

/// A document that saves a thumbnail with its contents.
final class IllustratedDocument: Document, @unchecked Sendable {
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("a tiny picture".utf8))
    override func load(fromContents contents: Any, ofType typeName: String?) throws {}
    override func contents(forType typeName: String) throws -> Any { Data("picture source".utf8) }
    override func fileAttributesToWrite(to url: URL, for saveOperation: SaveOperation) throws -> [AnyHashable: Any] {
        [URLResourceKey.thumbnailDictionaryKey: [URLThumbnailDictionaryItem.NSThumbnail1024x1024SizeKey: Self.png]]
    }
}

@Suite("Document: thumbnails (§9 32)", .elasticPool)
struct ThumbnailTests {
    @Test func aSavedThumbnailIsReadBackAsAPromisedResourceValue() async throws {
        let world = try DocumentWorld()
        let url = world.url("sketch.txt")
        let cache = world.directory.path + "/cache/thumbnails"
        let document = Thumbnails.$cacheOverride.withValue(cache) {
            CoordinationEngine.$override.withValue(world.engine) { IllustratedDocument(fileURL: url) }
        }
        #expect(await document.save(to: url, for: .forCreating))
        #expect(document.documentState == .normal)
        let values = try Thumbnails.$cacheOverride.withValue(cache) {
            try url.promisedItemResourceValues(forKeys: [.thumbnailDictionaryKey, .nameKey, .fileSizeKey])
        }
        #expect(values.thumbnailDictionary?[.NSThumbnail1024x1024SizeKey] == IllustratedDocument.png)
        #expect(values.name == "sketch.txt" && values.fileSize == 14)
        #expect(FileManager.default.fileExists(atPath: Thumbnails.cachePath(for: url, in: cache)))
    }
}

@Suite("Document: autosave", .elasticPool)
struct AutosaveTests {
    @Test func savesAfterAPauseAndWithinTheMaximumDelayWhileEditsContinue() async throws {
        let world = try DocumentWorld()
        let url = try world.file("typing.txt", "")
        let document = world.document(url)
        document.autosaveDelay = .milliseconds(300)
        document.autosaveMaximumDelay = .milliseconds(700)
        #expect(await document.open())
        // One edit, then a pause: saved after the delay.
        document.edit("a")
        #expect(await eventually(10) { (try? String(contentsOf: url, encoding: .utf8)) == "a" })
        // The save completes (and clears the change count) just after the file is written.
        #expect(await eventually(10) { !document.hasUnsavedChanges })
        // Edits every 100 ms, faster than the delay: still saved within the maximum delay, so before
        // the edits stop (judged by the edits, not the clock, which a loaded machine stretches).
        // Without the maximum delay, edits this close together would never be saved while they kept
        // coming; typing goes on until a save lands (at most 100 edits, ten seconds at the least).
        var savedWhileTyping = false, edits = 0
        while !savedWhileTyping, edits < 100 {
            edits += 1
            document.edit("a" + String(repeating: "b", count: edits))
            try await Task.sleep(for: .milliseconds(100))
            savedWhileTyping = (try? String(contentsOf: url, encoding: .utf8))?.hasPrefix("ab") == true
        }
        #expect(savedWhileTyping, "no autosave while edits kept coming")
        document.edit("a" + String(repeating: "b", count: edits + 1))
        #expect(await document.close())
        #expect(try String(contentsOf: url, encoding: .utf8) == "a" + String(repeating: "b", count: edits + 1))
    }
}

@Suite("Document: safe save keeps what the file carries", .elasticPool)
struct SafeSaveAttributeTests {
    @Test func modeTagsAndIdentitySurviveSaves() async throws {
        let world = try DocumentWorld()
        let url = try world.file("tagged.txt", "v1")
        chmod(url.path, 0o600)
        try FilePath(url.path).setExtendedAttribute(named: "user.xdg.tags", to: Array("urgent,work".utf8))
        let document = world.document(url)
        #expect(await document.open())
        let identity = try DocumentIdentity.identifier(ofItemAt: url.path, creating: false)
        let inode = try FileStatus(path: FilePath(url.path)).inode
        document.edit("v2")
        #expect(await document.autosave())
        #expect(try FileStatus(path: FilePath(url.path)).inode != inode, "saved by rename")
        #expect(try FileStatus(path: FilePath(url.path)).mode == 0o600)
        #expect(try FilePath(url.path).extendedAttribute(named: "user.xdg.tags") == Array("urgent,work".utf8))
        #expect(try DocumentIdentity.identifier(ofItemAt: url.path, creating: false) == identity)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: world.directory.path).filter { $0.contains(".folio-save-") }
        #expect(leftovers.isEmpty)
    }
}

@Suite("Document: progress of long loads", .elasticPool)
struct ProgressTests {
    @Test func largeFilesPublishProgressAndCanBeCancelled() async throws {
        let world = try DocumentWorld()
        let url = world.url("large.txt")
        try Data(repeating: UInt8(ascii: "a"), count: 6 << 20).write(to: url)
        let document = world.document(url)
        #expect(await document.open())
        #expect(document.progress?.completedUnitCount == 6 << 20 && document.progress?.totalUnitCount == 6 << 20)
        #expect(!document.documentState.contains(.progressAvailable))
        _ = await document.close()

        // Cancelled as soon as it is published: the open fails and the document stays closed.
        let second = world.document(url)
        let token = NotificationCenter.default.addObserver(forName: Document.stateChangedNotification, object: second, queue: nil) { _ in
            if second.documentState.contains(.progressAvailable) { second.progress?.cancel() }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        #expect(await second.open() == false)
        #expect(second.documentState.contains(.closed))
    }
}
