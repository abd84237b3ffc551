@testable import Folio
import Foundation

/// The seeds' `GenericTextDocument`: a document whose model is a string.
final class TextDocument: Document, @unchecked Sendable {
    private let modelLock = NSLock()
    private var model = ""
    private(set) var loadedKinds: [String] = []
    private(set) var loadedTypes: [String?] = []
    private(set) var editingCalls: [String] = []
    /// Makes each raw write slower, to catch changes made during a save.
    var writeDelay: useconds_t = 0
    /// Raw writes begun so far (a test waits for one to start rather than guessing how long).
    var writesStarted: Int { modelLock.withLock { startedWrites } }
    private var startedWrites = 0

    var text: String {
        get { modelLock.withLock { model } }
        set { modelLock.withLock { model = newValue } }
    }

    /// Edits the text and records the change, as an app does.
    func edit(_ newText: String) {
        text = newText
        updateChangeCount(.done)
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        modelLock.withLock {
            loadedTypes.append(typeName)
            switch contents {
            case let data as Data:
                loadedKinds.append("Data")
                model = String(decoding: data, as: UTF8.self)
            case let wrapper as FileWrapper:
                loadedKinds.append("FileWrapper")
                model = String(decoding: wrapper.fileWrappers?["TXT.rtf"]?.regularFileContents ?? Data(), as: UTF8.self)
            default:
                loadedKinds.append("\(type(of: contents))")
            }
        }
    }

    override func contents(forType typeName: String) throws -> Any {
        Data(text.utf8)
    }

    override func writeContents(_ contents: Any, to url: URL, for saveOperation: SaveOperation, originalContentsURL: URL?) throws {
        modelLock.withLock { startedWrites += 1 }
        if writeDelay > 0 { usleep(writeDelay) }
        try super.writeContents(contents, to: url, for: saveOperation, originalContentsURL: originalContentsURL)
    }

    override func disableEditing() { modelLock.withLock { editingCalls.append("disable") } }
    override func enableEditing() { modelLock.withLock { editingCalls.append("enable") } }
}
