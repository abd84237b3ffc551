import Foundation
package import Folio

/// Runs coordination scripts: JSON commands in, JSON events out. The test helper executable wraps it
/// with stdin and stdout so that a scenario runs unchanged in this process or across processes.
///
/// Commands (`op`): `read`/`write` (`id`, `path`, `options`, optional `coordinator`, `presenter`,
/// `hold` — default true: the accessor waits for `release`), `readwrite`/`write2` (`path2`,
/// `options2`), `intents` (`intents`: [{`path`, `write`, `options`}]), `prepare` (`reads`, `writes`),
/// `release`, `nested` (inside the held accessor `id`: `access`, `path`, `options`), `move` (inside
/// `id`: rename `from` → `to` and report it), `writefile` (`path`, `text`, inside `id` when given),
/// `cancel` (`coordinator`), `set-purpose`, `presenter` (`name`, `path`, `directory`, behaviours
/// `save`/`accommodate`/`relinquish`), `remove-presenter`, `ping`.
///
/// Events: `entered`, `exited`, `done`, `failed` (with `domain`, `code`), `presenter` (`callback`,
/// `onQueue`), `nested`, `moved`, `wrote`, `purpose`, `pong`, `error`. Every event carries `t`, the
/// monotonic time in nanoseconds.
package final class CoordinationDriver: @unchecked Sendable {
    let engine: CoordinationEngine
    let emit: @Sendable (WireValue) -> Void
    private let lock = NSLock()
    private var coordinators: [String: FileCoordinator] = [:]
    private var presenters: [String: any FilePresenter] = [:]
    private var scripts: [String: PresenterScript] = [:]
    private var gates: [String: Gate] = [:]
    fileprivate let documentLock = NSLock()
    fileprivate var documentTable: [String: ScriptedDocument] = [:]

    package init(engine: CoordinationEngine, emit: @escaping @Sendable (WireValue) -> Void) {
        self.engine = engine
        self.emit = emit
    }

    /// The engine of this process (the daemon's when one runs), for the helper executable.
    package convenience init(emit: @escaping @Sendable (WireValue) -> Void) {
        self.init(engine: CoordinationEngine.current, emit: emit)
    }

    /// Runs one command. Coordinations run on their own threads; this returns at once.
    package func run(_ command: WireValue) {
        let op = command["op"]?.stringValue ?? ""
        let id = command["id"]?.stringValue ?? ""
        switch op {
        case "read", "write", "readwrite", "write2", "intents", "prepare":
            let gate = Gate()
            lock.withLock { gates[id] = gate }
            let coordinator = coordinator(for: command)
            Thread.detachNewThread { [self] in self.coordinate(op, id: id, command, coordinator, gate) }
        case "release":
            gate(id)?.post(.release)
        case "nested", "move":
            gate(id)?.post(.action(command))
        case "writefile":
            if command["id"] != nil, let gate = gate(id) {
                gate.post(.action(command))
            } else {
                perform(command, coordinator: nil)
            }
        case "cancel":
            let name = command["coordinator"]?.stringValue ?? ""
            lock.withLock { coordinators[name] }?.cancel()
            event("cancelled", ["coordinator": .string(name)])
        case "set-purpose":
            let coordinator = coordinator(for: command, applyingPurpose: false)
            do {
                try coordinator.setPurposeIdentifier(command["purpose"]?.stringValue ?? "")
                event("purpose", ["ok": true])
            } catch {
                event("purpose", ["ok": false, "message": .string("\(error)")])
            }
        case "presenter":
            addPresenter(command)
        case "remove-presenter":
            let name = command["name"]?.stringValue ?? ""
            if let presenter = lock.withLock({ presenters.removeValue(forKey: name) }) {
                FileCoordinator.removeFilePresenter(presenter, engine: engine)
            }
            event("removed", ["name": .string(name)])
        case "ping":
            event("pong", ["id": .string(id)])
        case "document-open", "document-edit", "document-save", "document-close", "document-revert", "save-loop":
            runDocument(op, command)
        default:
            event("error", ["message": .string("unknown op \(op)")])
        }
    }

    private func event(_ name: String, _ fields: [String: WireValue]) {
        var event = fields
        event["event"] = .string(name)
        event["t"] = .int(MonotonicClock.now())
        emit(.object(event))
    }

    private func gate(_ id: String) -> Gate? { lock.withLock { gates[id] } }

    private func coordinator(for command: WireValue, applyingPurpose: Bool = true) -> FileCoordinator {
        let presenter = command["presenter"]?.stringValue.flatMap { name in lock.withLock { presenters[name] } }
        guard let name = command["coordinator"]?.stringValue else {
            return FileCoordinator(filePresenter: presenter, engine: engine)
        }
        return lock.withLock {
            if let existing = coordinators[name] { return existing }
            let made = FileCoordinator(filePresenter: presenter, engine: engine)
            if applyingPurpose, let purpose = command["purpose"]?.stringValue { try? made.setPurposeIdentifier(purpose) }
            coordinators[name] = made
            return made
        }
    }

    private func url(_ command: WireValue, _ key: String = "path") -> URL {
        URL(fileURLWithPath: command[key]?.stringValue ?? "/nonexistent")
    }

    private func options(_ command: WireValue, _ key: String = "options") -> UInt {
        UInt(command[key]?.intValue ?? 0)
    }

    private func coordinate(_ op: String, id: String, _ command: WireValue, _ coordinator: FileCoordinator, _ gate: Gate) {
        let hold = command["hold"]?.boolValue ?? true
        let body: @Sendable ([URL]) -> Void = { [self] urls in
            var fields: [String: WireValue] = ["id": .string(id), "urls": .array(urls.map { .string($0.path) })]
            if command["capture"]?.boolValue == true, let first = urls.first, let data = FileManager.default.contents(atPath: first.path) {
                fields["text"] = .string(String(decoding: data.prefix(65536), as: UTF8.self))
            }
            if let first = urls.first, op == "read", FileCoordinator.ReadingOptions(rawValue: self.options(command)).contains(.forUploading) {
                let head = (try? FileHandle(forReadingFrom: first).read(upToCount: 2)) ?? Data()
                fields["zip"] = .bool(head == Data("PK".utf8))
                fields["exists"] = .bool(FileManager.default.fileExists(atPath: first.path))
            }
            event("entered", fields)
            if hold { wait(gate, coordinator) }
            event("exited", ["id": .string(id)])
        }
        var error: NSError?
        switch op {
        case "read":
            coordinator.coordinate(
                readingItemAt: url(command), options: .init(rawValue: options(command)), error: &error) { body([$0]) }
        case "write":
            coordinator.coordinate(
                writingItemAt: url(command), options: .init(rawValue: options(command)), error: &error) { body([$0]) }
        case "readwrite":
            coordinator.coordinate(
                readingItemAt: url(command), options: .init(rawValue: options(command)), writingItemAt: url(command, "path2"),
                options: .init(rawValue: options(command, "options2")), error: &error) { body([$0, $1]) }
        case "write2":
            coordinator.coordinate(
                writingItemAt: url(command), options: .init(rawValue: options(command)), writingItemAt: url(command, "path2"),
                options: .init(rawValue: options(command, "options2")), error: &error) { body([$0, $1]) }
        case "prepare":
            let reads = (command["reads"]?.arrayValue ?? []).compactMap(\.stringValue).map { URL(fileURLWithPath: $0) }
            let writes = (command["writes"]?.arrayValue ?? []).compactMap(\.stringValue).map { URL(fileURLWithPath: $0) }
            coordinator.prepare(forReadingItemsAt: reads, writingItemsAt: writes, error: &error) { completion in
                body(reads + writes)
                completion()
            }
        case "intents":
            let intents = (command["intents"]?.arrayValue ?? []).map { item -> FileAccessIntent in
                let target = URL(fileURLWithPath: item["path"]?.stringValue ?? "/nonexistent")
                let bits = UInt(item["options"]?.intValue ?? 0)
                return item["write"]?.boolValue == true
                    ? .writingIntent(with: target, options: .init(rawValue: bits))
                    : .readingIntent(with: target, options: .init(rawValue: bits))
            }
            let queue = OperationQueue()
            queue.name = "intents \(id)"
            let finished = DispatchSemaphore(value: 0)
            let calls = Counter()
            coordinator.coordinate(with: intents, queue: queue) { [self] failure in
                calls.increment()
                if let failure {
                    self.failed(id, failure as NSError, calls: calls.value)
                } else {
                    let onQueue = OperationQueue.current === queue
                    self.event("intents", ["id": .string(id), "onQueue": .bool(onQueue), "calls": .int(Int64(calls.value))])
                    body(intents.map(\.url))
                }
                finished.signal()
            }
            finished.wait()
            return
        default:
            return
        }
        if let error { failed(id, error, calls: 1) } else { event("done", ["id": .string(id)]) }
    }

    private func failed(_ id: String, _ error: NSError, calls: Int) {
        event("failed", [
            "id": .string(id), "domain": .string(error.domain), "code": .int(Int64(error.code)),
            "message": .string(error.localizedDescription), "calls": .int(Int64(calls)),
        ])
    }

    /// Holds an accessor until `release`, running the actions posted meanwhile on this thread.
    private func wait(_ gate: Gate, _ coordinator: FileCoordinator) {
        while true {
            switch gate.take() {
            case .release: return
            case .action(let command): perform(command, coordinator: coordinator)
            }
        }
    }

    private func perform(_ command: WireValue, coordinator: FileCoordinator?) {
        let id = command["id"]?.stringValue ?? ""
        switch command["op"]?.stringValue {
        case "nested":
            guard let coordinator else { return }
            var error: NSError?
            var ran = false
            if command["access"]?.stringValue == "write" {
                coordinator.coordinate(writingItemAt: url(command), options: .init(rawValue: options(command)), error: &error) { _ in
                    ran = true
                }
            } else {
                coordinator.coordinate(readingItemAt: url(command), options: .init(rawValue: options(command)), error: &error) { _ in
                    ran = true
                }
            }
            var fields: [String: WireValue] = ["id": .string(id), "ran": .bool(ran)]
            if let error { fields["code"] = .int(Int64(error.code)) }
            event("nested", fields)
        case "move":
            let from = url(command, "from"), to = url(command, "to")
            let ok = rename(from.path, to.path) == 0
            if ok { coordinator?.item(at: from, didMoveTo: to) }
            event("moved", ["id": .string(id), "ok": .bool(ok)])
        case "writefile":
            let ok = (try? Data((command["text"]?.stringValue ?? "").utf8).write(to: url(command))) != nil
            event("wrote", ["id": .string(id), "ok": .bool(ok)])
        default:
            break
        }
    }

    private func addPresenter(_ command: WireValue) {
        let name = command["name"]?.stringValue ?? ""
        let script = PresenterScript(
            name: name, url: command["path"]?.stringValue.map { URL(fileURLWithPath: $0) }, behaviour: PresenterBehaviour(command),
            engine: engine, emit: emit)
        let presenter: any FilePresenter =
            command["directory"]?.boolValue == true ? ScriptedDirectoryPresenter(script: script) : ScriptedPresenter(script: script)
        lock.withLock {
            presenters[name] = presenter
            scripts[name] = script
        }
        FileCoordinator.addFilePresenter(presenter, engine: engine)
        event("added", ["name": .string(name)])
    }
}

extension CoordinationDriver {
    /// Document commands: `document-open` (`name`, `path`), `document-edit` (`name`, `text`),
    /// `document-save`, `document-revert`, `document-close`, and `save-loop` (`path`, `minSize`,
    /// `maxSize`: saves ever new contents until killed, each framed `BEGIN n … END n`).
    fileprivate func runDocument(_ op: String, _ command: WireValue) {
        let name = command["name"]?.stringValue ?? "doc"
        switch op {
        case "document-open":
            let url = URL(fileURLWithPath: command["path"]?.stringValue ?? "/nonexistent")
            let document = CoordinationEngine.$override.withValue(engine) {
                ScriptedDocument(name: name, fileURL: url, emit: emit)
            }
            setDocument(name, document)
            document.open { ok in document.log("opened", ["ok": .bool(ok)]) }
        case "document-edit":
            guard let document = document(name) else { return }
            document.text = command["text"]?.stringValue ?? ""
            document.updateChangeCount(.done)
            document.log("edited")
        case "document-save":
            guard let document = document(name) else { return }
            document.autosave { ok in document.log("saved", ["ok": .bool(ok), "state": .int(Int64(document.documentState.rawValue))]) }
        case "document-revert":
            guard let document = document(name) else { return }
            document.revert(toContentsOf: document.fileURL) { ok in document.log("reverted", ["ok": .bool(ok)]) }
        case "document-close":
            guard let document = document(name) else { return }
            document.close { ok in document.log("closed", ["ok": .bool(ok)]) }
        case "save-loop":
            let url = URL(fileURLWithPath: command["path"]?.stringValue ?? "/nonexistent")
            let minimum = Int(command["minSize"]?.intValue ?? 1), maximum = Int(command["maxSize"]?.intValue ?? 65536)
            let prefix = command["prefix"]?.stringValue ?? "r"
            let document = CoordinationEngine.$override.withValue(engine) { ScriptedDocument(name: name, fileURL: url, emit: emit) }
            Thread.detachNewThread {
                let opened = DispatchSemaphore(value: 0)
                document.open { _ in opened.signal() }
                opened.wait()
                document.log("looping")
                var round = 0
                while true {
                    round += 1
                    let size = Int.random(in: minimum...max(minimum, maximum))
                    document.text = "BEGIN \(prefix)-\(round) " + String(repeating: "x", count: size) + " END \(prefix)-\(round)\n"
                    document.updateChangeCount(.done)
                    let saved = DispatchSemaphore(value: 0)
                    document.save(to: url, for: .forOverwriting) { _ in saved.signal() }
                    saved.wait()
                    if round % 16 == 0 { document.log("saved", ["round": .int(Int64(round))]) }
                }
            }
        default:
            break
        }
    }

    private func setDocument(_ name: String, _ document: ScriptedDocument) {
        documentLock.withLock { documentTable[name] = document }
    }

    private func document(_ name: String) -> ScriptedDocument? {
        documentLock.withLock { documentTable[name] }
    }
}

/// What a held accessor waits for.
final class Gate: @unchecked Sendable {
    enum Signal { case release, action(WireValue) }
    private let condition = NSCondition()
    private var signals: [Signal] = []

    func post(_ signal: Signal) {
        condition.lock()
        signals.append(signal)
        condition.signal()
        condition.unlock()
    }

    func take() -> Signal {
        condition.lock()
        defer { condition.unlock() }
        while signals.isEmpty { condition.wait() }
        return signals.removeFirst()
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
