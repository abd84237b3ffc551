import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Beyond Apple: writes made without coordination reach presenters through inotify.
@Suite("Coordination: uncoordinated writes reach presenters", .elasticPool)
struct UncoordinatedChangeTests {
    @Test(arguments: Mode.allCases) func plainWriteSaveByRenameMoveCreateDelete(mode: Mode) throws {
        let world = try Scenario(mode)
        let d = try world.folder("D")
        let f = try world.file("D/f.txt")
        let p = try world.participant()
        p.send(Command.presenter("P", f))
        p.send(Command.presenter("DIR", d, directory: true))
        _ = try waitForCount(p, "added", 2)

        // `echo changed > f`
        try Data("changed\n".utf8).write(to: URL(fileURLWithPath: f))
        _ = try p.waitFor("presenter", callback: "didChange", presenter: "P")
        #expect(try p.waitFor("presenter", callback: "subitemDidChange", presenter: "DIR")["path"]?.stringValue == f)

        // An editor's safe save: write a temporary file, rename it over the document.
        let temporary = world.path("D/.f.txt.swp")
        try Data("saved by an editor\n".utf8).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, f) == 0)
        _ = try waitForCallbacks(p, "P", "didChange", 2)
        #expect(!p.callbacks(of: "P").contains("didMove"), "a save by rename is a change, not a move")

        // A new file appears.
        let n = try world.file("D/new.txt")
        _ = try p.waitFor("presenter", callback: "subitemDidAppear", presenter: "DIR", path: n)

        // `mv f g`: the presenter follows.
        let g = world.path("D/g.txt")
        #expect(rename(f, g) == 0)
        #expect(try p.waitFor("presenter", callback: "didMove", presenter: "P")["to"]?.stringValue == g)
        let moved = try p.waitFor("presenter", callback: "subitemDidMove", presenter: "DIR")
        #expect(moved["path"]?.stringValue == f && moved["to"]?.stringValue == g)

        // `rm g`: the presenter hears of a change and finds its item gone.
        let changesBefore = p.callbacks(of: "P").filter { $0 == "didChange" }.count
        #expect(unlink(g) == 0)
        _ = try waitForCallbacks(p, "P", "didChange", changesBefore + 1)
        #expect(world.allPresenterCallbacksOnTheirQueues)
    }

    /// A coordinated write is reported once: the kernel's events for it add nothing.
    @Test(arguments: Mode.allCases) func coordinatedWritesAreNotReportedTwice(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let p = try world.participant(), w = try world.participant()
        p.send(Command.presenter("P", f))
        _ = try p.waitFor("added")
        for round in 0..<3 {
            w.send(Command.write("w\(round)", f))
            _ = try w.waitFor("entered", id: "w\(round)")
            w.send(["op": "writefile", "id": .string("w\(round)"), "path": .string(f), "text": .string("round \(round)\n")])
            _ = try waitForCount(w, "wrote", round + 1)
            w.send(Command.release("w\(round)"))
            _ = try w.waitFor("done", id: "w\(round)")
        }
        _ = try waitForCallbacks(p, "P", "didChange", 3)
        // An uncoordinated move after them reaches the watcher after the kernel's events for the
        // coordinated writes: any double report of those comes before the presenter hears of the move.
        #expect(rename(f, world.path("moved.txt")) == 0)
        let heard = try waitForCallbacks(p, "P", "didMove", 1)
        let beforeTheMove = heard.prefix { $0 != "didMove" }
        #expect(beforeTheMove.filter { $0 == "didChange" }.count == 3, "\(heard)")
    }
}

/// Waits until `presenter` heard `callback` at least `count` times.
func waitForCallbacks(_ participant: Participant, _ presenter: String, _ callback: String, _ count: Int, timeout: Double = 10) throws -> [String] {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        let seen = participant.callbacks(of: presenter)
        if seen.filter({ $0 == callback }).count >= count { return seen }
        usleep(5000)
    }
    throw TestFailure("\(presenter) heard \(participant.callbacks(of: presenter)), not \(count)× \(callback)")
}
