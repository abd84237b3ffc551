// Samples 11–14 of Apple's "Document-Based App Programming Guide for iOS", chapter "Creating a
// Custom Document Object": Listings 3-3 and 3-5 (a document whose contents are one `NSData`)
// and Listings 3-4 and 3-6 (a file package, through `NSFileWrapper`).
//
// Apple's listings are Objective-C; this is their Swift, line for line. Lines changed beyond
// that: `import UIKit` → `import Folio` (+ Foundation); `UIImage` and `UIImagePNGRepresentation`
// (UIKit) → the image's PNG bytes as `Data`; `@autoreleasepool` (an Objective-C runtime pool)
// left out. The guide's constants (`TextFileName`, `ImageFileName`, `TextFileEncoding`) and the
// delegate's protocol are not shown in it; they are given here as the listings use them.
import Folio
import FolioTestTraits
import Foundation
import Testing

protocol NoteDocumentDelegate: AnyObject {
    func noteDocumentContentsUpdated(_ noteDocument: UIDocument)
}

let TextFileName = "Text.txt"
let ImageFileName = "Image.png"
let TextFileEncoding = String.Encoding.utf8

final class NoteDocument: UIDocument, @unchecked Sendable {
    var documentText: String?
    weak var delegate: NoteDocumentDelegate?

    // Listing 3-3: Loading a document's data (NSData)
    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        if let contents = contents as? Data, contents.count > 0 {
            self.documentText = String(data: contents, encoding: .utf8)
        } else {
            self.documentText = ""
        }
        delegate?.noteDocumentContentsUpdated(self)
    }

    // Listing 3-5: Returning a snapshot of document data (NSData)
    override func contents(forType typeName: String) throws -> Any {
        if self.documentText == nil {
            self.documentText = ""
        }
        guard let docData = self.documentText!.data(using: .utf8, allowLossyConversion: false) else {
            throw CocoaError(.fileWriteInapplicableStringEncoding)
        }
        return docData
    }
}

final class ImageNotesDocument: UIDocument, @unchecked Sendable {
    var fileWrapper: FileWrapper?
    var text: String?
    var image: Data?
    weak var delegate: NoteDocumentDelegate?

    // Listing 3-6: Returning a snapshot of document data (NSFileWrapper)
    override func contents(forType typeName: String) throws -> Any {
        if self.fileWrapper == nil {
            self.fileWrapper = FileWrapper(directoryWithFileWrappers: [:])
        }
        let fileWrappers = self.fileWrapper!.fileWrappers ?? [:]
        if fileWrappers[TextFileName] == nil, self.text != nil {
            let textData = self.text!.data(using: TextFileEncoding)!
            let textFileWrapper = FileWrapper(regularFileWithContents: textData)
            textFileWrapper.preferredFilename = TextFileName
            self.fileWrapper!.addFileWrapper(textFileWrapper)
        }
        if fileWrappers[ImageFileName] == nil, self.image != nil {
            let imageData = self.image!
            let imageFileWrapper = FileWrapper(regularFileWithContents: imageData)
            imageFileWrapper.preferredFilename = ImageFileName
            self.fileWrapper!.addFileWrapper(imageFileWrapper)
        }
        return self.fileWrapper!
    }

    // Listing 3-4: Loading a document's data (NSFileWrapper)
    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        self.fileWrapper = contents as? FileWrapper
        delegate?.noteDocumentContentsUpdated(self)
    }
}

/// The view controller's part: told each time a document's contents are loaded.
final class ContentsUpdatedRecorder: NoteDocumentDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _count = 0
    var count: Int { lock.withLock { _count } }
    func noteDocumentContentsUpdated(_ noteDocument: UIDocument) { lock.withLock { _count += 1 } }
}

@Suite("Apple's samples: Creating a Custom Document Object", .elasticPool)
struct DocumentGuideCustomDocumentTests {
    /// A flat document created, closed and opened again: its text comes back, the delegate hears
    /// of the load, and an empty file opens as empty text.
    @Test func aDataDocumentSavesAndLoadsItsText() async throws {
        let world = try PortWorld("note-document")
        try await world.run {
            let url = world.url("Groceries.note")
            let created = NoteDocument(fileURL: url)
            created.documentText = "Milk, bread, Käse"
            #expect(await created.save(to: url, for: .forCreating))
            #expect(await created.close())
            #expect(try Data(contentsOf: url) == Data("Milk, bread, Käse".utf8))

            let opened = NoteDocument(fileURL: url)
            let recorder = ContentsUpdatedRecorder()
            opened.delegate = recorder
            #expect(await opened.open())
            #expect(opened.documentText == "Milk, bread, Käse")
            #expect(recorder.count == 1)
            #expect(await opened.close())

            try Data().write(to: world.url("Empty.note"))
            let empty = NoteDocument(fileURL: world.url("Empty.note"))
            #expect(await empty.open())
            #expect(empty.documentText == "")
            #expect(await empty.close())
        }
    }

    /// A package document: its text and image are files in a folder, read back as the wrappers'
    /// contents; a wrapper already there is kept rather than added again.
    @Test func aPackageDocumentKeepsItsTextAndImageAsFiles() async throws {
        let world = try PortWorld("image-notes")
        try await world.run {
            let url = world.url("Trip.imagenotes")
            let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3])
            let created = ImageNotesDocument(fileURL: url)
            created.text = "Notes from the trip"
            created.image = png
            #expect(await created.save(to: url, for: .forCreating))
            #expect(await created.close())
            var isFolder: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) && isFolder.boolValue)
            #expect(try Data(contentsOf: url.appendingPathComponent(TextFileName)) == Data("Notes from the trip".utf8))
            #expect(try Data(contentsOf: url.appendingPathComponent(ImageFileName)) == png)

            let opened = ImageNotesDocument(fileURL: url)
            let recorder = ContentsUpdatedRecorder()
            opened.delegate = recorder
            #expect(await opened.open())
            #expect(recorder.count == 1)
            let wrappers = try #require(opened.fileWrapper?.fileWrappers)
            #expect(wrappers[TextFileName]?.regularFileContents == Data("Notes from the trip".utf8))
            #expect(wrappers[ImageFileName]?.regularFileContents == png)
            // Saved again with both wrappers present: the package holds the same two files.
            opened.text = "Changed, but the text's wrapper is already there"
            #expect(await opened.save(to: url, for: .forOverwriting))
            #expect(await opened.close())
            #expect(try FileManager.default.contentsOfDirectory(atPath: url.path).sorted() == [ImageFileName, TextFileName])
            #expect(try Data(contentsOf: url.appendingPathComponent(TextFileName)) == Data("Notes from the trip".utf8))
        }
    }
}
