import ArgumentParser
import Folio
import Foundation

/// `folio pick`: the terminal document picker — on its own (prints the chosen paths), or as the
/// daemon's picker front end for apps (`--serve`), interactive or answering from a script.
struct PickCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pick",
        abstract: "Pick documents in the terminal; with --serve, be the document picker apps' requests are shown in.")

    @Option(name: .customLong("type"), help: "A type the documents must conform to (repeatable): identifier, extension or MIME type.")
    var types: [String] = []
    @Flag(help: "Allow choosing several documents.") var multiple = false
    @Option(help: "The folder to start in.") var directory: String?
    @Flag(help: "Serve apps' picker requests through the daemon until interrupted.") var serve = false
    @Option(help: "With --serve: answer from this JSON file instead of the terminal — an array of {\"paths\": [...]} or {\"cancel\": true}, used in order; requests after the last are cancelled.")
    var script: String?

    func run() throws {
        if serve {
            try serveRequests()
            return
        }
        var identifiers: [String] = []
        for name in types {
            guard let type = TypeRegistry.shared.type(matching: name) else {
                printError("folio pick: no type \(name)")
                throw ExitCode.failure
            }
            identifiers.append(type.identifier)
        }
        let request = PickerRequest(
            mode: .open, types: identifiers, allowsMultipleSelection: multiple,
            directory: directory.map { URL(fileURLWithPath: $0).standardizedFileURL.path }, showsFileExtensions: true)
        // Whether the person's input ended (end of file) rather than their cancelling: each says so.
        var ended = false
        let picker = TerminalPicker(
            request: request, title: "Choose \(multiple ? "documents" : "a document")",
            readLine: {
                let line = Swift.readLine()
                if line == nil { ended = true }
                return line
            },
            output: { FileHandle.standardError.write(Data($0.utf8)) })
        guard let chosen = picker.run() else {
            printError(ended ? "folio pick: the input ended before a choice (nothing chosen)" : "folio pick: cancelled (nothing chosen)")
            throw ExitCode(1)
        }
        for path in chosen { print(path) }
    }

    private func serveRequests() throws {
        var answers: [WireValue]?
        if let script {
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: script))
                guard let list = try WireValue(parsing: [UInt8](data)).arrayValue else { throw CocoaError(.fileReadCorruptFile) }
                answers = list
            } catch {
                printError("folio pick: \(script) is not a JSON array of answers: \(error)")
                throw ExitCode.failure
            }
        }
        let requests = RequestQueue()
        try withDaemon("pick") { daemon in
            daemon.onEvent = { event in
                if event["event"]?.stringValue == "picker" { requests.push(event) }
            }
            _ = try daemon.send(PickerAttach())
            printError("folio pick: serving the document picker (interrupt to stop)")
            var next = 0
            while let event = requests.pop() {
                guard let number = event["request"]?.intValue, let params = event["params"],
                    let request = try? PickerRequest(params: params)
                else { continue }
                var answer: [String]?
                if var script = answers {
                    FileHandle.standardOutput.write(Data(event.serialized() + [UInt8(ascii: "\n")]))
                    if next < script.count {
                        answer = script[next]["cancel"]?.boolValue == true ? nil : (script[next]["paths"]?.arrayValue ?? []).compactMap(\.stringValue)
                        script[next] = .null
                        next += 1
                    }
                } else {
                    let app = event["appName"]?.stringValue ?? event["app"]?.stringValue ?? "a program"
                    let what: String
                    switch request.mode {
                    case .open: what = "open \(request.allowsMultipleSelection ? "documents" : "a document")"
                    case .import: what = "import a copy of \(request.allowsMultipleSelection ? "documents" : "a document")"
                    case .export: what = "export \(request.urls.count) document(s) — choose a folder"
                    case .move: what = "move \(request.urls.count) document(s) — choose a folder"
                    }
                    let picker = TerminalPicker(
                        request: request, title: "\(app) asks to \(what)", readLine: { Swift.readLine() },
                        output: { FileHandle.standardError.write(Data($0.utf8)) })
                    answer = picker.run()
                }
                do {
                    _ = try daemon.send(PickerChoose(request: UInt64(number), paths: answer))
                } catch {
                    printError("folio pick: the daemon refused the choice: \((error as? CoordinationFailure)?.message ?? "\(error)")")
                    _ = try? daemon.send(PickerChoose(request: UInt64(number), paths: nil))
                }
            }
        }
    }
}

/// Picker requests from the daemon's reader thread to the command's loop; `pop` waits.
private final class RequestQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [WireValue] = []

    func push(_ item: WireValue) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    func pop() -> WireValue? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty { condition.wait() }
        return items.removeFirst()
    }
}
