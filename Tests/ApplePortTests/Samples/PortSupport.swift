// Not a sample: what the ports share. Apple's prefixed names for Folio's types, declared once as
// an app porting iOS code would (so that each sample keeps Apple's spelling), and a scratch
// folder with a private version store and bookmark key for each test. This folder is compiled
// twice: by ApplePortTests in Swift 6 mode and, through a symbolic link, by ApplePortTests5 in
// Swift 5 mode.
@testable import Folio
import FolioTesting
import Foundation

typealias UIDocument = Document
typealias NSFileCoordinator = FileCoordinator
typealias NSFilePresenter = FilePresenter
typealias NSFileVersion = FileVersion
typealias NSFileAccessIntent = FileAccessIntent
typealias NSMetadataQuery = MetadataQuery
typealias NSMetadataItem = MetadataItem
typealias UIDocumentPickerViewController = DocumentPicker
typealias UIDocumentPickerDelegate = DocumentPickerDelegate
typealias UIDocumentPickerMode = DocumentPickerMode
// These two shadow Foundation's classes of the same names, which cannot serve here: Linux's
// `NSPredicate` does not evaluate metadata, and its `NSSortDescriptor(key:ascending:)` is
// unavailable (no key-value coding).
typealias NSPredicate = MetadataPredicate
typealias NSSortDescriptor = MetadataSortDescriptor

/// A scratch folder whose documents keep their versions in a store of their own, and whose
/// bookmarks are signed with a key of their own.
struct PortWorld {
    let directory: TemporaryDirectory
    let store: VersionStore

    init(_ name: String) throws {
        directory = try TemporaryDirectory("port-" + name)
        store = VersionStore(directory: directory.path + "/.versions")
    }

    func url(_ name: String) -> URL { URL(fileURLWithPath: directory.path + "/" + name) }

    /// Runs `body` with this world's version store and bookmark key.
    func run<T>(_ body: () async throws -> T) async rethrows -> T {
        try await VersionStore.$override.withValue(store) {
            try await BookmarkKeys.$override.withValue(BookmarkKey(bytes: Array(repeating: 5, count: 32))) { try await body() }
        }
    }

    /// Waits (at most 10 s) until `condition` holds.
    func wait(_ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            guard Date() < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
