import Folio
import Foundation

/// The seeds' `GenericTextDocument`: a document whose model is a string.
final class TextDocument: Document, @unchecked Sendable {
    private let lock = NSLock()
    private var storage = ""
    /// Called after every load (open, revert, reload after another process's change).
    var onLoad: (@Sendable (String) -> Void)?

    var text: String {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data, let text = String(data: data, encoding: .utf8) else {
            throw CocoaError(.fileReadInapplicableStringEncoding)
        }
        self.text = text
        onLoad?(text)
    }

    override func contents(forType typeName: String) throws -> Any {
        Data(text.utf8)
    }

    /// Appends a line, as a user typing would.
    func append(_ line: String) {
        text += line + "\n"
        updateChangeCount(.done)
    }
}
