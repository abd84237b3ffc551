// Samples 19–22 of Apple's "Lister" sample (2016, Swift; ListerKit's ListUtilities.swift and
// ListDocument.swift): reading a list with a coordinated reading intent on a serial queue and
// the security scope held around it; moving a list into place with a moving and a merging
// intent in one coordination; removing a list with a deleting intent; and a document whose save,
// once it succeeds, reads the saved file back under coordination (to hand it to the watch).
//
// Lines changed from Apple's: `import UIKit` and `import WatchConnectivity` → `import Folio`
// (+ Foundation). Of the copy, the listing quotes lines 265–299; the lines before (which write
// the list to `tempURL` in `tempDirectory` and start the security scope) are the function's
// parameters and its first three lines here, and the second `print`, a dump of the error's
// fields that interpolates optionals, is left out. Apple's Swift 2.2 spellings → today's, as Apple's later Lister has them
// (`NSURL` → `URL`, `readingIntentWithURL(_:options:)` → `readingIntent(with:options:)`,
// `coordinateAccessWithIntents(_:queue:)` → `coordinate(with:queue:byAccessor:)`,
// `NSData(contentsOfURL:options: .DataReadingUncached)` → `Data(contentsOf:options: .uncached)`,
// `NSError?` → `Error?`, `saveToURL(_:forSaveOperation:)` → `save(to:for:)`). The completion
// handlers are `@Sendable`: the coordinator's accessor is `@Sendable` in Apple's SDK too, so
// Swift 6 asks it of whatever the accessor captures. `NSKeyedUnarchiver.unarchiveObjectWithData`
// (deprecated since iOS 12) → `unarchivedObject(ofClass:from:)`, and `List` (an NSCoding class in
// ListerKit) is a small secure-coding class here. Lines 136–140 of `readListAtURL`, which the
// quoted listing leaves out, declare the two results. In the document's save, the paired
// watch's session (WatchConnectivity: `session.activationState`, `outstandingFileTransfers`,
// `transferFile`) → a record of the file that would be transferred.
import Folio
import FolioTestTraits
import Foundation
import Testing

final class List: NSObject, NSSecureCoding, @unchecked Sendable {
    static let supportsSecureCoding = true
    let text: String
    init(text: String) { self.text = text }
    required init?(coder: NSCoder) {
        guard let text = coder.decodeObject(of: NSString.self, forKey: "text") else { return nil }
        self.text = text as String
    }
    func encode(with coder: NSCoder) { coder.encode(NSString(string: text), forKey: "text") }
}

let listUtilitiesQueue: OperationQueue = {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    return queue
}()

enum ListUtilities {
    static func readList(at url: URL, completionHandler: @escaping @Sendable (List?, Error?) -> Void) {
        let fileCoordinator = NSFileCoordinator()

        // `url` may be a security scoped resource.
        let successfulSecurityScopedResourceAccess = url.startAccessingSecurityScopedResource()

        let readingIntent = NSFileAccessIntent.readingIntent(with: url, options: .withoutChanges)
        fileCoordinator.coordinate(with: [readingIntent], queue: listUtilitiesQueue) { accessError in
            if accessError != nil {
                if successfulSecurityScopedResourceAccess {
                    url.stopAccessingSecurityScopedResource()
                }

                completionHandler(nil, accessError)

                return
            }

            var deserializedList: List?
            var readError: Error?

            do {
                let contents = try Data(contentsOf: readingIntent.url, options: .uncached)
                deserializedList = try NSKeyedUnarchiver.unarchivedObject(ofClass: List.self, from: contents)

                assert(deserializedList != nil, "The provided URL must correspond to a `List` object.")
            }
            catch let error as NSError {
                readError = error as NSError
            }

            if successfulSecurityScopedResourceAccess {
                url.stopAccessingSecurityScopedResource()
            }

            completionHandler(deserializedList, readError)
        }
    }

    static func copyList(from fromURL: URL, to toURL: URL, tempURL: URL?, tempDirectory: URL?) {
        let fileCoordinator = NSFileCoordinator()
        let fileManager = FileManager.default
        let successfulSecurityScopedResourceAccess = fromURL.startAccessingSecurityScopedResource()

        // Now perform a coordinated replace to move the file from the temporary location to its final destination.
        let movingIntent = NSFileAccessIntent.writingIntent(with: tempURL!, options: .forMoving)
        let mergingIntent = NSFileAccessIntent.writingIntent(with: toURL, options: .forMerging)
        fileCoordinator.coordinate(with: [movingIntent, mergingIntent], queue: listUtilitiesQueue) { accessError in
            if accessError != nil {
                print("Couldn't move file: \(fromURL.absoluteString) to: \(toURL.absoluteString) error: \(accessError!.localizedDescription).")
                return
            }

            do {
                try Data(contentsOf: movingIntent.url, options: []).write(to: mergingIntent.url, options: .atomic)

                let fileAttributes = [FileAttributeKey.extensionHidden: true]

                try fileManager.setAttributes(fileAttributes, ofItemAtPath: mergingIntent.url.path)
            }
            catch let error as NSError {
                // An error occured when moving `url` to `toURL`. In your app, handle this gracefully.
                print("Couldn't move file: \(fromURL) to: \(toURL) error: \(error.localizedDescription).")
            }

            if successfulSecurityScopedResourceAccess {
                fromURL.stopAccessingSecurityScopedResource()
            }

            // Cleanup
            guard let directoryToRemove = tempDirectory else { return }
            do {
                try fileManager.removeItem(at: directoryToRemove)
            }
            catch {}
        }
    }

    static func removeList(at url: URL, completionHandler: (@Sendable (Error?) -> Void)? = nil) {
        let fileCoordinator = NSFileCoordinator()

        // `url` may be a security scoped resource.
        let successfulSecurityScopedResourceAccess = url.startAccessingSecurityScopedResource()

        let writingIntent = NSFileAccessIntent.writingIntent(with: url, options: .forDeleting)
        fileCoordinator.coordinate(with: [writingIntent], queue: listUtilitiesQueue) { accessError in
            if accessError != nil {
                completionHandler?(accessError)

                return
            }

            let fileManager = FileManager()

            var removeError: Error?

            do {
                try fileManager.removeItem(at: writingIntent.url)
            }
            catch let error as NSError {
                removeError = error
            }

            if successfulSecurityScopedResourceAccess {
                url.stopAccessingSecurityScopedResource()
            }

            completionHandler?(removeError)
        }
    }
}

final class ListDocument: UIDocument, @unchecked Sendable {
    var list = List(text: "")
    private let transferLock = NSLock()
    private var _transferred: [URL] = []
    /// What would have gone to the paired watch.
    var transferred: [URL] { transferLock.withLock { _transferred } }

    override func contents(forType typeName: String) throws -> Any {
        try NSKeyedArchiver.archivedData(withRootObject: list, requiringSecureCoding: true)
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data, let list = try NSKeyedUnarchiver.unarchivedObject(ofClass: List.self, from: data) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        self.list = list
    }

    override func save(to url: URL, for saveOperation: UIDocument.SaveOperation, completionHandler: ((Bool) -> Void)?) {
        super.save(to: url, for: saveOperation) { success in
            // On a successful save, transfer the file to the paired watch if appropriate.
            if success {
                let fileCoordinator = NSFileCoordinator()
                let readingIntent = NSFileAccessIntent.readingIntent(with: url, options: [])
                fileCoordinator.coordinate(with: [readingIntent], queue: OperationQueue()) { accessError in
                    if accessError != nil {
                        return
                    }

                    self.transferLock.withLock { self._transferred.append(readingIntent.url) }
                }
            }

            completionHandler?(success)
        }
    }
}

@Suite("Apple's samples: Lister's list utilities", .elasticPool)
struct ListerListUtilitiesTests {
    final class Outcome<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var _value: Value?
        var value: Value? { lock.withLock { _value } }
        func set(_ value: Value) { lock.withLock { _value = value } }
    }

    /// A list is written by a document, read back through a reading intent; a file that is no
    /// list, and one that is not there, come back as errors.
    @Test func aListIsReadThroughAReadingIntent() async throws {
        let world = try PortWorld("lister-read")
        try await world.run {
            let url = world.url("Groceries.list")
            let document = ListDocument(fileURL: url)
            document.list = List(text: "Apples\nPears")
            #expect(await document.save(to: url, for: .forCreating))
            #expect(await document.close())
            // The save's reading intent saw the saved file.
            #expect(await world.wait { document.transferred.map(\.path) == [url.path] })

            let read = Outcome<(String?, Bool)>()
            ListUtilities.readList(at: url) { list, error in read.set((list?.text, error == nil)) }
            #expect(await world.wait { read.value != nil })
            #expect(read.value?.0 == "Apples\nPears" && read.value?.1 == true)

            let missing = Outcome<(String?, Bool)>()
            ListUtilities.readList(at: world.url("Missing.list")) { list, error in missing.set((list?.text, error == nil)) }
            #expect(await world.wait { missing.value != nil })
            #expect(missing.value?.0 == nil && missing.value?.1 == false)
        }
    }

    /// A list written to a temporary folder moves into place (over the old one) and the
    /// temporary folder goes; removing it deletes the file.
    @Test func aListMovesIntoPlaceAndIsRemoved() async throws {
        let world = try PortWorld("lister-move")
        let temporary = world.url("tmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let tempURL = temporary.appendingPathComponent("Todo.list")
        try Data("new list".utf8).write(to: tempURL)
        let destination = world.url("Todo.list")
        try Data("old list".utf8).write(to: destination)

        ListUtilities.copyList(from: world.url("Template.list"), to: destination, tempURL: tempURL, tempDirectory: temporary)
        // Apple's function reports nothing: the temporary folder's removal is its last step.
        #expect(await world.wait { !FileManager.default.fileExists(atPath: temporary.path) })
        #expect(try Data(contentsOf: destination) == Data("new list".utf8))

        let removed = Outcome<Bool>()
        ListUtilities.removeList(at: destination) { removed.set($0 == nil) }
        #expect(await world.wait { removed.value != nil })
        #expect(removed.value == true)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}
