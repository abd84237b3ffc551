import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// apple-semantics §9 scenarios 10–18: the messages coordinations send presenters.
@Suite("Coordination: presenters (§9 10–18)", .elasticPool)
struct PresenterScenarioTests {
    /// 10. A read asks the presenter to save first, unless `.withoutChanges`.
    @Test(arguments: Mode.allCases) func saveBeforeRead(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let p = try world.participant(), r = try world.participant()
        p.send(Command.presenter("P", f))
        _ = try p.waitFor("added")
        r.send(Command.read("r", f))
        let entered = try r.waitFor("entered", id: "r")
        let save = try p.waitFor("presenter", callback: "save")
        #expect(save.t < entered.t)
        r.send(Command.release("r"))
        _ = try r.waitFor("done", id: "r")

        r.send(Command.read("quiet", f, .withoutChanges))
        _ = try r.waitFor("entered", id: "quiet")
        r.send(Command.release("quiet"))
        _ = try r.waitFor("done", id: "quiet")
        #expect(p.callbacks(of: "P").filter { $0 == "save" }.count == 1)
        #expect(world.allPresenterCallbacksOnTheirQueues)
    }

    /// 11. The accessor waits until the presenter relinquishes; its reacquirer runs on its queue
    /// after the accessor returns.
    @Test(arguments: Mode.allCases) func relinquishAndReacquire(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let p = try world.participant(), q = try world.participant(), r = try world.participant()
        p.send(Command.presenter("P", f, ["relinquish": "reacquire"]))
        q.send(Command.presenter("Q", f, ["relinquish": "delay", "delayMs": 300]))
        _ = try p.waitFor("added")
        _ = try q.waitFor("added")
        r.send(Command.read("r", f, .withoutChanges))
        let entered = try r.waitFor("entered", id: "r")
        let answered = try q.waitFor("presenter", callback: "relinquishToReaderAnswered")
        #expect(entered.t > answered.t, "the accessor started before Q relinquished")
        #expect(try p.waitFor("presenter", callback: "relinquishToReader").t < entered.t)
        #expect(!p.sees("presenter", callback: "reacquire", within: 0.2))
        r.send(Command.release("r"))
        let exited = try r.waitFor("exited", id: "r")
        let reacquired = try p.waitFor("presenter", callback: "reacquire")
        #expect(reacquired.t > exited.t)
        #expect(world.allPresenterCallbacksOnTheirQueues)
    }

    /// 12. A presenter refusing the deletion fails it with that error; the accessor never runs.
    @Test(arguments: Mode.allCases) func refusedDeletion(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let p = try world.participant(), w = try world.participant()
        p.send(Command.presenter("P", f, ["accommodate": "error"]))
        _ = try p.waitFor("added")
        w.send(Command.write("del", f, .forDeleting))
        let failed = try w.waitFor("failed", id: "del")
        #expect(failed["domain"]?.stringValue == NSCocoaErrorDomain)
        #expect(failed["code"]?.intValue == Int64(CocoaError.Code.fileWriteNoPermission.rawValue))
        #expect(failed["message"]?.stringValue?.contains("P refuses") == true)
        #expect(!w.events.contains { $0["event"]?.stringValue == "entered" })
        // The refused claim is gone: others proceed.
        w.send(Command.write("after", f))
        _ = try w.waitFor("entered", id: "after")
        w.send(Command.release("after"))
    }

    /// 13. Deleting a directory asks presenters of items inside to accommodate the deletion; 14.
    /// `.forMerging` asks for a save, a plain write does not.
    @Test(arguments: Mode.allCases) func deletionAndMerging(mode: Mode) throws {
        let world = try Scenario(mode)
        let d = try world.folder("D")
        let x = try world.file("D/x.txt")
        let f = try world.file("f.txt")
        let p = try world.participant(), w = try world.participant()
        p.send(Command.presenter("X", x))
        p.send(Command.presenter("F", f))
        _ = try waitForCount(p, "added", 2)
        w.send(Command.write("del", d, .forDeleting))
        _ = try w.waitFor("entered", id: "del")
        #expect(p.sees("presenter", callback: "accommodateDeletion", presenter: "X", within: 10), "\(p.callbacks(of: "X"))")
        #expect(p.sees("presenter", callback: "relinquishToWriter", presenter: "X", within: 10), "\(p.callbacks(of: "X"))")
        w.send(Command.release("del"))
        _ = try w.waitFor("done", id: "del")

        w.send(Command.write("plain", f))
        _ = try w.waitFor("entered", id: "plain")
        w.send(Command.release("plain"))
        _ = try w.waitFor("done", id: "plain")
        #expect(!p.callbacks(of: "F").contains("save"))
        #expect(p.sees("presenter", callback: "relinquishToWriter", presenter: "F", within: 10), "\(p.callbacks(of: "F"))")
        w.send(Command.write("merge", f, .forMerging))
        _ = try w.waitFor("entered", id: "merge")
        w.send(Command.release("merge"))
        _ = try w.waitFor("done", id: "merge")
        #expect(p.sees("presenter", callback: "save", presenter: "F", within: 10), "\(p.callbacks(of: "F"))")
        #expect(world.allPresenterCallbacksOnTheirQueues)
    }

    /// 15. The writer's own presenter hears nothing; another presenter of the item does.
    /// 16. After a write, presenters hear did-change; the folder's presenter, subitem did-change —
    /// or did-appear for a new item.
    @Test(arguments: Mode.allCases) func changeNotifications(mode: Mode) throws {
        let world = try Scenario(mode)
        let d = try world.folder("D")
        let f = try world.file("D/f.txt")
        let n = world.path("D/new.txt")
        let p = try world.participant(), q = try world.participant()
        p.send(Command.presenter("P", f))
        _ = try p.waitFor("added")
        q.send(Command.presenter("Q", f))
        q.send(Command.presenter("DIR", d, directory: true))
        _ = try waitForCount(q, "added", 2)
        p.send(Command.write("own", f, [], ["presenter": "P"]))
        _ = try p.waitFor("entered", id: "own")
        p.send(["op": "writefile", "id": "own", "path": .string(f), "text": "edited by P\n"])
        _ = try p.waitFor("wrote", id: "own")
        p.send(Command.release("own"))
        _ = try p.waitFor("done", id: "own")
        _ = try q.waitFor("presenter", callback: "didChange", presenter: "Q")
        let subitem = try q.waitFor("presenter", callback: "subitemDidChange", presenter: "DIR")
        #expect(subitem["path"]?.stringValue == f)
        #expect(q.sees("presenter", callback: "relinquishToWriter", presenter: "Q", within: 10), "\(q.callbacks(of: "Q"))")
        // Another participant's write after it reaches P (messages to P arrive in order): P heard
        // nothing before that write's first message, so nothing of its own write.
        let otherStarted = MonotonicClock.now()
        q.send(Command.write("other", f))
        _ = try q.waitFor("entered", id: "other")
        q.send(Command.release("other"))
        _ = try q.waitFor("done", id: "other")
        _ = try p.waitFor("presenter", callback: "didChange", presenter: "P")
        let heardByP = p.events.filter { $0["event"]?.stringValue == "presenter" && $0["name"]?.stringValue == "P" }
        #expect(
            heardByP.first?["callback"]?.stringValue == "relinquishToWriter" && heardByP.allSatisfy { $0.t > otherStarted },
            "the writer's own presenter heard of its write: \(heardByP.map { String(decoding: $0.serialized(), as: UTF8.self) })")

        p.send(Command.write("create", n))
        _ = try p.waitFor("entered", id: "create")
        p.send(["op": "writefile", "id": "create", "path": .string(n), "text": "new\n"])
        _ = try p.waitFor("wrote", id: "create")
        p.send(Command.release("create"))
        let appeared = try q.waitFor("presenter", callback: "subitemDidAppear", presenter: "DIR")
        #expect(appeared["path"]?.stringValue == n)
        #expect(world.allPresenterCallbacksOnTheirQueues)
    }

    /// Versions: a conflict version added by another process (as the drive's sync adds one), its
    /// resolution, and its removal reach the item's presenter (`presentedItemDidGain`,
    /// `…DidResolveConflict`, `…DidLose`) and the folder's presenter (the subitem messages). The
    /// daemon watches the version store, so every writer of it is heard; the in-process engine
    /// (no daemon) has no such watch.
    @Test(arguments: [Mode.daemon, .processes]) func versionsReachPresenters(mode: Mode) throws {
        let world = try Scenario(mode)
        let d = try world.folder("D")
        let f = try world.file("D/report.txt")
        let p = try world.participant(), q = try world.participant()
        p.send(Command.presenter("P", f))
        q.send(Command.presenter("DIR", d, directory: true))
        _ = try p.waitFor("added")
        _ = try q.waitFor("added")
        // Another process's store: the daemon's, as an app or the sync engine writes it.
        let store = VersionStore(directory: FolioPaths(environment: world.environment).versionsDirectory)
        let (identity, record) = try store.addVersion(ofItemAt: f, data: Data("the other device's side\n".utf8), kind: .conflict, isConflict: true)
        let gained = try p.waitFor("presenter", callback: "didGain", presenter: "P")
        #expect(gained["version"]?.stringValue == record.id)
        let subitem = try q.waitFor("presenter", callback: "subitemDidGain", presenter: "DIR")
        #expect(subitem["path"]?.stringValue == f && subitem["version"]?.stringValue == record.id)
        try store.markResolved(record.id, identity: identity, path: f)
        #expect(try p.waitFor("presenter", callback: "didResolve", presenter: "P")["version"]?.stringValue == record.id)
        _ = try q.waitFor("presenter", callback: "subitemDidResolve", presenter: "DIR")
        try store.remove(record.id, identity: identity, path: f)
        #expect(try p.waitFor("presenter", callback: "didLose", presenter: "P")["version"]?.stringValue == record.id)
        _ = try q.waitFor("presenter", callback: "subitemDidLose", presenter: "DIR")
        #expect(p.callbacks(of: "P").filter { $0.hasPrefix("did") && $0 != "didChange" } == ["didGain", "didResolve", "didLose"])
        #expect(world.allPresenterCallbacksOnTheirQueues)
    }

    /// 17. A coordinated move: the item's presenter gets its new URL, the folder's presenter hears
    /// of the move, presenters inside a moved folder follow it.
    @Test(arguments: Mode.allCases) func moves(mode: Mode) throws {
        let world = try Scenario(mode)
        let d = try world.folder("D")
        let src = try world.file("D/src.txt")
        let dst = world.path("D/dst.txt")
        let inner = try world.file("D/Sub/inner.txt")
        let p = try world.participant(), m = try world.participant()
        p.send(Command.presenter("P", src))
        p.send(Command.presenter("DIR", d, directory: true))
        p.send(Command.presenter("IN", inner))
        _ = try waitForCount(p, "added", 3)
        m.send(Command.write2("mv", src, .forMoving, dst, .forReplacing))
        _ = try m.waitFor("entered", id: "mv")
        m.send(["op": "move", "id": "mv", "from": .string(src), "to": .string(dst)])
        #expect(try m.waitFor("moved", id: "mv")["ok"]?.boolValue == true)
        m.send(Command.release("mv"))
        _ = try m.waitFor("done", id: "mv")
        #expect(try p.waitFor("presenter", callback: "didMove", presenter: "P")["to"]?.stringValue == dst)
        let dirMove = try p.waitFor("presenter", callback: "subitemDidMove", presenter: "DIR")
        #expect(dirMove["path"]?.stringValue == src && dirMove["to"]?.stringValue == dst)
        // The registry follows: a write at the new path reaches P.
        m.send(Command.write("touch", dst))
        _ = try m.waitFor("entered", id: "touch")
        m.send(Command.release("touch"))
        _ = try p.waitFor("presenter", callback: "didChange", presenter: "P")

        let sub = world.path("D/Sub"), moved = world.path("D/Moved")
        m.send(Command.write2("mvdir", sub, .forMoving, moved, .forReplacing))
        _ = try m.waitFor("entered", id: "mvdir")
        m.send(["op": "move", "id": "mvdir", "from": .string(sub), "to": .string(moved)])
        _ = try m.waitFor("moved", id: "mvdir")
        m.send(Command.release("mvdir"))
        #expect(try p.waitFor("presenter", callback: "didMove", presenter: "IN")["to"]?.stringValue == moved + "/inner.txt")
        #expect(world.allPresenterCallbacksOnTheirQueues)
    }

    /// 18. Callbacks run on the presenter's queue; after removal none arrive.
    @Test(arguments: Mode.allCases) func removedPresentersHearNothing(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let p = try world.participant(), w = try world.participant()
        p.send(Command.presenter("P", f))
        _ = try p.waitFor("added")
        w.send(Command.write("one", f))
        _ = try w.waitFor("entered", id: "one")
        w.send(Command.release("one"))
        _ = try p.waitFor("presenter", callback: "didChange")
        let before = p.callbacks(of: "P").count
        p.send(["op": "remove-presenter", "name": "P"])
        _ = try p.waitFor("removed")
        w.send(Command.write("two", f, .forMerging))
        _ = try w.waitFor("entered", id: "two")
        w.send(Command.release("two"))
        _ = try w.waitFor("done", id: "two")
        #expect(!p.sees("presenter", callback: "save", within: 0.3))
        #expect(p.callbacks(of: "P").count == before)
        #expect(world.allPresenterCallbacksOnTheirQueues)
    }

    /// A presenter that saves through a coordinator created with itself, in answer to a read's save
    /// request, gets priority over that read (§1.5): no deadlock, and the reader sees the save.
    @Test(arguments: Mode.allCases) func presenterSavesDuringARead(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let p = try world.participant(), r = try world.participant()
        p.send(Command.presenter("P", f, ["save": "write"]))
        _ = try p.waitFor("added")
        r.send(Command.read("r", f))
        _ = try r.waitFor("entered", id: "r")
        #expect(try p.waitFor("presenter", callback: "saved")["ok"]?.boolValue == true)
        #expect(try String(contentsOfFile: f, encoding: .utf8) == "saved by P\n")
        r.send(Command.release("r"))
        _ = try r.waitFor("done", id: "r")
    }
}
