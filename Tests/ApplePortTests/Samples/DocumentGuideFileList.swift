// Samples 5–6 of Apple's "Document-Based App Programming Guide for iOS", Listings 4-3 and 4-4:
// a metadata query for the app's `.txt` documents, and the file list rebuilt from its results
// when it finishes gathering and on every update.
//
// Apple's listings are Objective-C; this is their Swift, line for line. Lines changed beyond
// that: `viewDidLoad` (a UIKit hook) → `start()`; the table view's selection and reload (UI)
// left out; the search scope `NSMetadataQueryUbiquitousDocumentsScope` → the
// documents folder (an app's ubiquitous scope is answered by the daemon, with the drive).
import Folio
import FolioTestTraits
import Foundation
import Testing

struct FileRepresentation {
    let fileName: String
    let url: URL
}

final class DocumentListController: @unchecked Sendable {
    let documentsDir: URL
    private let lock = NSLock()
    private var _fileList: [FileRepresentation] = []
    var fileList: [FileRepresentation] { lock.withLock { _fileList } }
    private var _query: NSMetadataQuery!
    private var observers: [Any] = []

    init(documentsDir: URL) { self.documentsDir = documentsDir }

    func start() {
        _query = NSMetadataQuery()
        _query.searchScopes = [documentsDir]
        _query.predicate = NSPredicate(format: "%K LIKE '*.txt'", NSMetadataItemFSNameKey)
        let notificationCenter = NotificationCenter.default
        observers.append(notificationCenter.addObserver(forName: .NSMetadataQueryDidFinishGathering, object: nil, queue: nil) { [weak self] _ in
            self?.fileListReceived()
        })
        observers.append(notificationCenter.addObserver(forName: .NSMetadataQueryDidUpdate, object: nil, queue: nil) { [weak self] _ in
            self?.fileListReceived()
        })
        _query.start()
    }

    func fileListReceived() {
        var list: [FileRepresentation] = []
        let queryResults = _query.results
        for result in queryResults as! [NSMetadataItem] {
            let fileName = result.value(forAttribute: NSMetadataItemFSNameKey) as! String
            list.append(FileRepresentation(fileName: fileName, url: result.value(forAttribute: NSMetadataItemURLKey) as! URL))
        }
        lock.withLock { _fileList = list }
    }

    func stop() {
        _query.stop()
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }
}

@Suite("Apple's samples: Document-Based App Programming Guide for iOS", .elasticPool)
struct DocumentGuideFileListTests {
    @Test func theFileListFollowsTheQuery() async throws {
        let world = try PortWorld("file-list")
        try Data("a".utf8).write(to: world.url("Shopping.txt"))
        try Data("b".utf8).write(to: world.url("Picture.png"))
        let controller = DocumentListController(documentsDir: world.directory.url)
        controller.start()
        defer { controller.stop() }
        #expect(await world.wait { controller.fileList.map(\.fileName) == ["Shopping.txt"] })
        #expect(controller.fileList.first?.url.path == world.url("Shopping.txt").path)
        try Data("c".utf8).write(to: world.url("Ideas.txt"))
        #expect(await world.wait { Set(controller.fileList.map(\.fileName)) == ["Shopping.txt", "Ideas.txt"] })
    }
}
