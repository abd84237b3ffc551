// Samples 1–2 of Apple's "Building a Document Browser-Based App" (TextDocument.swift):
// `contents(forType:)` and `load(fromContents:ofType:)` for UTF-8 text, and a document that
// observes its own `stateChangedNotification` and tells its delegate.
//
// Lines changed from Apple's: `import UIKit` and `import os.log` → `import Folio` (+ Foundation);
// each `os_log(…)` → `log(…)` (os_log is Apple's logging; the port records the lines instead).
// The delegate protocol, the error enum and the properties are Apple's, from the same file.
import Folio
import FolioTestTraits
import Foundation
import Testing

protocol TextDocumentDelegate: AnyObject {
    func textDocumentEnableEditing(_ doc: TextDocument)
    func textDocumentDisableEditing(_ doc: TextDocument)
    func textDocumentUpdateContent(_ doc: TextDocument)
    func textDocumentTransferBegan(_ doc: TextDocument)
    func textDocumentTransferEnded(_ doc: TextDocument)
    func textDocumentSaveFailed(_ doc: TextDocument)
}

enum TextDocumentError: Error {
    case unableToParseText
    case unableToEncodeText
}

class TextDocument: UIDocument {
    public var text = "" {
        didSet {
            if let currentDelegate = delegate {
                currentDelegate.textDocumentUpdateContent(self)
            }
        }
    }

    public weak var delegate: TextDocumentDelegate?
    public var loadProgress = Progress(totalUnitCount: 10)

    private var docStateObserver: Any?
    private let logLock = NSLock()
    private var lines: [String] = []
    var logged: [String] { logLock.withLock { lines } }
    private func log(_ line: String) { logLock.withLock { lines.append(line) } }

    override init(fileURL url: URL) {

        docStateObserver = nil
        super.init(fileURL: url)

        docStateObserver = NotificationCenter.default.addObserver(
            forName: UIDocument.stateChangedNotification,
            object: self,
            queue: nil) { _ in
                self.updateDocumentState()
        }
    }

    override func contents(forType typeName: String) throws -> Any {

        guard let data = text.data(using: .utf8) else {
            throw TextDocumentError.unableToEncodeText
        }

        log("==> Text Data Saved")

        return data as Any
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {

        guard let data = contents as? Data else {
            // This would be a developer error.
            fatalError("*** \(contents) is not an instance of NSData. ***")
        }

        guard let newText = String(data: data, encoding: .utf8) else {
            throw TextDocumentError.unableToParseText
        }

        // Mark the progress as complete
        loadProgress.completedUnitCount = loadProgress.totalUnitCount

        log("==> Text Data Loaded")
        text = newText
    }

    private func updateDocumentState() {

        if documentState == .normal {
            log("=> Document entered normal state")
            if let currentDelegate = delegate {
                currentDelegate.textDocumentEnableEditing(self)
            }
        }

        if documentState.contains(.closed) {
            log("=> Document has closed")
            if let currentDelegate = delegate {
                currentDelegate.textDocumentDisableEditing(self)
            }
        }

        if documentState.contains(.editingDisabled) {
            log("=> Document's editing is disabled")
            if let currentDelegate = delegate {
                currentDelegate.textDocumentDisableEditing(self)
            }
        }
    }
}

/// The sample's delegate, as its view controller would be: it records what it was told.
final class EditorRecorder: TextDocumentDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [String] = []
    var calls: [String] { lock.withLock { heard } }
    private func note(_ call: String) { lock.withLock { heard.append(call) } }
    func textDocumentEnableEditing(_ doc: TextDocument) { note("enable") }
    func textDocumentDisableEditing(_ doc: TextDocument) { note("disable") }
    func textDocumentUpdateContent(_ doc: TextDocument) { note("content") }
    func textDocumentTransferBegan(_ doc: TextDocument) { note("transfer began") }
    func textDocumentTransferEnded(_ doc: TextDocument) { note("transfer ended") }
    func textDocumentSaveFailed(_ doc: TextDocument) { note("save failed") }
}

@Suite("Apple's samples: Building a Document Browser-Based App", .elasticPool)
struct DocumentBrowserTextDocumentTests {
    @Test func textDocumentSavesLoadsAndReportsItsState() async throws {
        let world = try PortWorld("browser")
        try await world.run {
            let url = world.url("Note.txt")
            let created = TextDocument(fileURL: url)
            created.text = "Hello, Folio"
            #expect(await created.save(to: url, for: .forCreating))
            #expect(await created.close())
            let saved = try String(contentsOf: url, encoding: .utf8)
            #expect(saved == "Hello, Folio")

            let document = TextDocument(fileURL: url)
            let editor = EditorRecorder()
            document.delegate = editor
            #expect(await document.open())
            #expect(document.text == "Hello, Folio" && document.loadProgress.fractionCompleted == 1)
            #expect(await world.wait { editor.calls.contains("enable") })
            #expect(await document.close())
            #expect(await world.wait { editor.calls.contains("disable") })
            #expect(editor.calls.first == "content", "\(editor.calls)")
            #expect(created.logged.contains("==> Text Data Saved") && document.logged.contains("==> Text Data Loaded"))
            #expect(document.logged.contains("=> Document entered normal state") && document.logged.contains("=> Document has closed"))
        }
    }
}
