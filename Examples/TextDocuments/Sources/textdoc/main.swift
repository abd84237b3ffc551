// textdoc: create, show, append to and edit text documents; list and resolve their conflicts.
import Folio
import Foundation

let output = NSLock()
func say(_ text: String) {
    output.withLock {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data(("textdoc: " + text + "\n").utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else {
    fail("usage: textdoc new|show|append|edit|conflicts|resolve FILE [TEXT | --keep-current | --keep ID]")
}
let url = URL(fileURLWithPath: arguments[1])
let document = TextDocument(fileURL: url)

func opened() async {
    guard await document.open() else { fail("cannot open \(url.path)") }
}

switch arguments[0] {
case "new":
    document.text = arguments.count > 2 ? arguments[2] + "\n" : ""
    guard await document.save(to: url, for: .forCreating) else { fail("cannot create \(url.path)") }
    _ = await document.close()
    say("created \(url.lastPathComponent)")

case "show":
    await opened()
    say(document.text, terminator: "")
    _ = await document.close()

case "append":
    await opened()
    document.append(arguments.dropFirst(2).joined(separator: " "))
    guard await document.close() else { fail("cannot save \(url.path)") }

case "edit":
    // An editing session: commands on stdin; reloads and state changes are reported as they happen.
    document.autosaveDelay = .milliseconds(500)
    document.onLoad = { text in say("loaded: \(text.split(separator: "\n").joined(separator: " | "))") }
    let token = NotificationCenter.default.addObserver(forName: Document.stateChangedNotification, object: document, queue: nil) { _ in
        var names: [String] = []
        if document.documentState.contains(.closed) { names.append("closed") }
        if document.documentState.contains(.inConflict) { names.append("inConflict") }
        if document.documentState.contains(.savingError) { names.append("savingError") }
        say("state: " + (names.isEmpty ? "normal" : names.joined(separator: ",")))
    }
    await opened()
    while let line = readLine() {
        if line.hasPrefix("append ") {
            document.append(String(line.dropFirst(7)))
            say("appended")
        } else if line == "show" {
            say("text: \(document.text.split(separator: "\n").joined(separator: " | "))")
        } else if line == "save" {
            say(await document.autosave() ? "saved" : "save failed")
        } else if line == "quit" {
            break
        }
    }
    _ = await document.close()
    NotificationCenter.default.removeObserver(token)
    say("closed")

case "conflicts":
    guard let conflicts = FileVersion.unresolvedConflictVersionsOfItem(at: url) else { fail("no file \(url.path)") }
    if conflicts.isEmpty { say("no conflicts") }
    for version in conflicts {
        let text = (try? String(contentsOf: version.url, encoding: .utf8)) ?? "(unreadable)"
        say("\(version.persistentIdentifier) from \(version.localizedNameOfSavingComputer ?? "?"): \(text.split(separator: "\n").joined(separator: " | "))")
    }

case "resolve":
    // Apple's resolution flow, in one coordinated write: pick the winner, remove the other versions,
    // mark the conflicts resolved.
    let keep = arguments.count > 3 && arguments[2] == "--keep" ? arguments[3] : nil
    var failure: (any Error)?
    var coordinationError: NSError?
    FileCoordinator(filePresenter: nil).coordinate(writingItemAt: url, options: [], error: &coordinationError) { url in
        do {
            if let keep {
                guard let winner = FileVersion.version(itemAt: url, forPersistentIdentifier: keep) else {
                    fail("no version \(keep)")
                }
                try winner.replaceItem(at: url)
            }
            for version in FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [] { version.isResolved = true }
            try FileVersion.removeOtherVersionsOfItem(at: url)
        } catch {
            failure = error
        }
    }
    if let error = failure ?? coordinationError { fail("cannot resolve: \(error.localizedDescription)") }
    say("resolved")

default:
    fail("unknown command \(arguments[0])")
}

func say(_ text: String, terminator: String) {
    output.withLock { FileHandle.standardOutput.write(Data((text + terminator).utf8)) }
}
