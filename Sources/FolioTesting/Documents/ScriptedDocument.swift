import Foundation
import Folio

/// A text document driven by scripts (the other process in document tests): it logs loads and
/// state changes as events.
final class ScriptedDocument: Document, @unchecked Sendable {
    private let modelLock = NSLock()
    private var model = ""
    let name: String
    let emit: @Sendable (WireValue) -> Void
    private var observer: (any NSObjectProtocol)?

    init(name: String, fileURL: URL, emit: @escaping @Sendable (WireValue) -> Void) {
        self.name = name
        self.emit = emit
        super.init(fileURL: fileURL)
        observer = NotificationCenter.default.addObserver(forName: Document.stateChangedNotification, object: self, queue: nil) {
            [weak self] _ in
            guard let self else { return }
            self.log("state", ["state": .int(Int64(self.documentState.rawValue))])
        }
    }

    var text: String {
        get { modelLock.withLock { model } }
        set { modelLock.withLock { model = newValue } }
    }

    func log(_ what: String, _ extra: [String: WireValue] = [:]) {
        var event: [String: WireValue] = ["event": "document", "name": .string(name), "what": .string(what), "t": .int(MonotonicClock.now())]
        for (key, value) in extra { event[key] = value }
        emit(.object(event))
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        let text = String(decoding: contents as? Data ?? Data(), as: UTF8.self)
        self.text = text
        log("loaded", ["text": .string(text)])
    }

    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }

    override func presentedItemDidMove(to newURL: URL) {
        super.presentedItemDidMove(to: newURL)
        log("moved", ["to": .string(newURL.path)])
    }
}
