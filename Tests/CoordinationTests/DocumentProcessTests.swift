import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Documents in two real processes editing the same file, through the daemon (apple-semantics §9
/// 23–31 where another process matters).
@Suite("Document: two processes, one document", .elasticPool)
struct DocumentProcessTests {
    private func document(_ participant: Participant, _ what: String, name: String = "doc", timeout: Double = 10) throws -> WireValue {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = participant.events.last(where: {
                $0["event"]?.stringValue == "document" && $0["what"]?.stringValue == what && $0["name"]?.stringValue == name
            }) {
                return found
            }
            usleep(5000)
        }
        throw TestFailure("no document \(what) event; events: \(participant.events.map { String(decoding: $0.serialized(), as: UTF8.self) })")
    }

    private func count(_ participant: Participant, _ what: String) -> Int {
        participant.events.filter { $0["event"]?.stringValue == "document" && $0["what"]?.stringValue == what }.count
    }

    private func waitForCount(_ participant: Participant, _ what: String, _ expected: Int) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if count(participant, what) >= expected { return true }
            usleep(5000)
        }
        return false
    }

    @Test func anotherProcessesSaveReloadsAnOpenDocument() throws {
        let world = try Scenario(.processes)
        let f = try world.file("shared.txt", "first draft")
        let a = try world.participant(), b = try world.participant()
        for p in [a, b] { p.send(["op": "document-open", "name": "doc", "path": .string(f)]) }
        #expect(try document(a, "opened")["ok"]?.boolValue == true)
        #expect(try document(b, "opened")["ok"]?.boolValue == true)
        a.send(["op": "document-edit", "name": "doc", "text": "second draft by A"])
        a.send(["op": "document-save", "name": "doc"])
        #expect(try document(a, "saved")["ok"]?.boolValue == true)
        #expect(waitForCount(b, "loaded", 2), "B did not reload")
        #expect(try document(b, "loaded")["text"]?.stringValue == "second draft by A")
    }

    @Test func readersMakeTheOtherProcessSaveFirst() throws {
        let world = try Scenario(.processes)
        let f = try world.file("shared.txt", "on disk")
        let editor = try world.participant(), reader = try world.participant()
        editor.send(["op": "document-open", "name": "doc", "path": .string(f)])
        _ = try document(editor, "opened")
        editor.send(["op": "document-edit", "name": "doc", "text": "unsaved in the editor"])
        _ = try document(editor, "edited")
        reader.send(Command.read("r", f, [], ["hold": false, "capture": true]))
        #expect(try reader.waitFor("entered", id: "r")["text"]?.stringValue == "unsaved in the editor")
    }

    @Test func concurrentEditsKeepBothSides() throws {
        let world = try Scenario(.processes)
        let f = try world.file("plan.txt", "base")
        let a = try world.participant(), b = try world.participant()
        for p in [a, b] { p.send(["op": "document-open", "name": "doc", "path": .string(f)]) }
        _ = try document(a, "opened")
        _ = try document(b, "opened")
        b.send(["op": "document-edit", "name": "doc", "text": "B's unsaved plan"])
        _ = try document(b, "edited")
        a.send(["op": "document-edit", "name": "doc", "text": "A's plan"])
        a.send(["op": "document-save", "name": "doc"])
        _ = try document(a, "saved")
        // B has unsaved changes: it keeps them, keeps A's as a conflict version, shows .inConflict.
        let inConflict = Document.State.inConflict.rawValue
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline,
            !b.events.contains(where: { $0["what"]?.stringValue == "state" && (UInt($0["state"]?.intValue ?? 0) & inConflict) != 0 })
        {
            usleep(5000)
        }
        #expect(b.events.contains { $0["what"]?.stringValue == "state" && (UInt($0["state"]?.intValue ?? 0) & inConflict) != 0 })
        b.send(["op": "document-save", "name": "doc"])
        #expect(try document(b, "saved")["ok"]?.boolValue == true)
        #expect(try String(contentsOfFile: f, encoding: .utf8) == "B's unsaved plan")
        let store = VersionStoreProbe(world.environment)
        #expect(try store.conflictTexts(of: f) == ["A's plan"])
    }

    @Test func movesAndDeletionsReachTheOtherProcess() throws {
        let world = try Scenario(.processes)
        let f = try world.file("draft.txt", "text")
        let moved = world.path("final.txt")
        let holder = try world.participant(), mover = try world.participant()
        holder.send(["op": "document-open", "name": "doc", "path": .string(f)])
        _ = try document(holder, "opened")
        mover.send(Command.write2("mv", f, .forMoving, moved, .forReplacing))
        _ = try mover.waitFor("entered", id: "mv")
        mover.send(["op": "move", "id": "mv", "from": .string(f), "to": .string(moved)])
        _ = try mover.waitFor("moved", id: "mv")
        mover.send(Command.release("mv"))
        #expect(try document(holder, "moved")["to"]?.stringValue == moved)
        mover.send(Command.write("rm", moved, .forDeleting))
        _ = try mover.waitFor("entered", id: "rm")
        // The holder closed before the deleter entered; its report comes through another pipe, so
        // it may be read a moment after the mover's.
        let closed = Document.State.closed.rawValue
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline,
            !holder.events.contains(where: { $0["what"]?.stringValue == "state" && (UInt($0["state"]?.intValue ?? 0) & closed) != 0 })
        {
            usleep(5000)
        }
        #expect(holder.events.contains { $0["what"]?.stringValue == "state" && (UInt($0["state"]?.intValue ?? 0) & closed) != 0 })
        mover.send(Command.release("rm"))
    }
}

/// Reads the version store of a scenario's XDG tree, as a user's tools would.
struct VersionStoreProbe {
    let environment: [String: String]
    init(_ environment: [String: String]) { self.environment = environment }

    func conflictTexts(of path: String) throws -> [String] {
        let output = try ProcessRunner.folio(["versions", "list", path, "--json"], environment: environment)
        guard output.status == 0, let value = try? WireValue(parsing: Array(output.stdout.utf8)) else {
            throw TestFailure("folio versions list failed: \(output.stderr)")
        }
        return (value["versions"]?.arrayValue ?? []).filter { $0["conflict"]?.boolValue == true && $0["resolved"]?.boolValue != true }
            .compactMap { $0["path"]?.stringValue }.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
    }
}

extension DocumentProcessTests {
    /// 27 across processes: a reader in another process only ever sees whole saves.
    @Test func readersInAnotherProcessSeeOnlyWholeSaves() throws {
        let world = try Scenario(.processes)
        let f = try world.file("log.txt", "BEGIN s-0 x END s-0\n")
        let saver = try world.participant(), reader = try world.participant()
        saver.send(["op": "save-loop", "name": "loop", "path": .string(f), "prefix": "s", "minSize": 1000, "maxSize": 60000])
        _ = try document(saver, "looping", name: "loop")
        for index in 0..<60 {
            reader.send(Command.read("r\(index)", f, .withoutChanges, ["hold": false, "capture": true]))
            usleep(10_000)
        }
        let entered = try waitForEntered(reader, 60)
        let texts = entered.compactMap { $0["text"]?.stringValue }
        #expect(texts.count == 60)
        // Proof that the reads overlapped the saves (a loaded machine saves less often: no exact count).
        #expect(Set(texts).count > 1, "the reads did not overlap the saves")
        for text in texts {
            let lines = text.split(separator: " ")
            #expect(lines.first == "BEGIN" && text.hasSuffix(" END \(lines[1])\n"), "a torn read: \(text.prefix(30))…\(text.suffix(20))")
        }
    }

    private func waitForEntered(_ participant: Participant, _ count: Int) throws -> [WireValue] {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let entered = participant.events.filter { $0["event"]?.stringValue == "entered" }
            if entered.count >= count { return entered }
            usleep(10_000)
        }
        throw TestFailure("only \(participant.events.filter { $0["event"]?.stringValue == "entered" }.count) reads")
    }
}
