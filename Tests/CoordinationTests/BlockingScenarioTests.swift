import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// apple-semantics §9 scenarios 1–9 and 22: who blocks whom. Each runs in one process, across
/// daemon connections, and across real processes.
@Suite("Coordination: blocking (§9 1–9, 22)", .elasticPool)
struct BlockingScenarioTests {
    /// 1. Two readers share.
    @Test(arguments: Mode.allCases) func readersShare(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let a = try world.participant(), b = try world.participant()
        a.send(Command.read("r1", f))
        let first = try a.waitFor("entered", id: "r1")
        b.send(Command.read("r2", f))
        let second = try b.waitFor("entered", id: "r2")
        #expect(a.events.first { $0["event"]?.stringValue == "exited" } == nil, "r2 entered while r1 was inside")
        #expect(second.t > first.t)
        a.send(Command.release("r1"))
        b.send(Command.release("r2"))
        _ = try a.waitFor("done", id: "r1")
        _ = try b.waitFor("done", id: "r2")
    }

    /// 2. A writer waits for an active reader; 3. a reader waits for an active writer; two writers
    /// never overlap.
    @Test(arguments: Mode.allCases) func writersExclude(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let a = try world.participant(), b = try world.participant()
        for (first, second) in [("read", "write"), ("write", "read"), ("write", "write")] {
            let id1 = "\(first)1-\(second)", id2 = "\(second)2-\(first)"
            a.send(first == "read" ? Command.read(id1, f) : Command.write(id1, f))
            _ = try a.waitFor("entered", id: id1)
            b.send(second == "read" ? Command.read(id2, f) : Command.write(id2, f))
            try world.waitForClaim(on: f)
            #expect(!b.sees("entered", id: id2, within: 0.3), "\(second) entered while \(first) was inside")
            a.send(Command.release(id1))
            let exited = try a.waitFor("exited", id: id1)
            let entered = try b.waitFor("entered", id: id2)
            #expect(entered.t > exited.t)
            b.send(Command.release(id2))
            _ = try b.waitFor("done", id: id2)
        }
    }

    /// 4. A plain write of a directory does not wait for a reader inside it, nor a write inside for
    /// a reader of the directory.
    @Test(arguments: Mode.allCases) func plainDirectoryWritesDoNotBlockContents(mode: Mode) throws {
        let world = try Scenario(mode)
        let d = try world.folder("D")
        let x = try world.file("D/x.txt")
        let a = try world.participant(), b = try world.participant()
        a.send(Command.read("r", x))
        _ = try a.waitFor("entered", id: "r")
        b.send(Command.write("w", d))
        _ = try b.waitFor("entered", id: "w")
        a.send(Command.release("r"))
        b.send(Command.release("w"))

        a.send(Command.read("rd", d))
        _ = try a.waitFor("entered", id: "rd")
        b.send(Command.write("wx", x))
        _ = try b.waitFor("entered", id: "wx")
        a.send(Command.release("rd"))
        b.send(Command.release("wx"))
        _ = try b.waitFor("done", id: "wx")
    }

    /// 5. Deleting, moving or replacing a directory waits for readers and writers inside, and holds
    /// back later ones until it ends.
    @Test(arguments: Mode.allCases) func structuralDirectoryWritesExcludeContents(mode: Mode) throws {
        let world = try Scenario(mode)
        let d = try world.folder("D")
        let x = try world.file("D/x.txt")
        let a = try world.participant(), b = try world.participant(), c = try world.participant()
        let options: [(String, FileCoordinator.WritingOptions)] = [
            ("deleting", .forDeleting), ("moving", .forMoving), ("replacing", .forReplacing),
        ]
        for (name, option) in options {
            for inner in ["read", "write"] {
                let holder = "\(inner)-\(name)", structural = "dir-\(name)-\(inner)", later = "later-\(name)-\(inner)"
                a.send(inner == "read" ? Command.read(holder, x) : Command.write(holder, x))
                _ = try a.waitFor("entered", id: holder)
                b.send(Command.write(structural, d, option))
                try world.waitForClaim(on: d)
                #expect(!b.sees("entered", id: structural, within: 0.3), "W(D, \(name)) entered during \(inner)(D/x)")
                a.send(Command.release(holder))
                let entered = try b.waitFor("entered", id: structural)
                c.send(Command.read(later, x))
                try world.waitForClaim(on: x)
                #expect(!c.sees("entered", id: later, within: 0.3), "R(D/x) entered during W(D, \(name))")
                b.send(Command.release(structural))
                let exited = try b.waitFor("exited", id: structural)
                let laterEntered = try c.waitFor("entered", id: later)
                #expect(laterEntered.t > exited.t && entered.t < exited.t)
                c.send(Command.release(later))
                _ = try c.waitFor("done", id: later)
            }
        }
    }

    /// 6. Inside a package, coordinations count as coordinations of the whole package.
    @Test(arguments: Mode.allCases) func packageCountsAsOneItem(mode: Mode) throws {
        let world = try Scenario(mode)
        let a1 = try world.file("Doc.rtfd/a.txt")
        let b1 = try world.file("Doc.rtfd/b.txt")
        let a = try world.participant(), b = try world.participant()
        a.send(Command.read("rb", b1))
        _ = try a.waitFor("entered", id: "rb")
        b.send(Command.write("wa", a1))
        try world.waitForClaim(on: a1)
        #expect(!b.sees("entered", id: "wa", within: 0.3), "W(P/a) entered during R(P/b)")
        a.send(Command.release("rb"))
        _ = try b.waitFor("entered", id: "wa")
        b.send(Command.release("wa"))
        _ = try b.waitFor("done", id: "wa")
    }

    /// 7. Nested reads on the same coordinator run at once; a nested write of the same item fails
    /// with an error and never deadlocks.
    @Test(arguments: Mode.allCases) func nestedCoordinationOnOneCoordinator(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let a = try world.participant()
        a.send(Command.write("w", f, [], ["coordinator": "c"]))
        _ = try a.waitFor("entered", id: "w")
        a.send(["op": "nested", "id": "w", "access": "read", "path": .string(f)])
        let read = try a.waitFor("nested", id: "w")
        #expect(read["ran"]?.boolValue == true)
        #expect(read["code"] == nil)
        a.send(["op": "nested", "id": "w", "access": "write", "path": .string(f)])
        let nestedWrites = try waitForCount(a, "nested", 2)
        #expect(nestedWrites[1]["ran"]?.boolValue == false)
        #expect(nestedWrites[1]["code"]?.intValue == Int64(CocoaError.Code.featureUnsupported.rawValue))
        a.send(Command.release("w"))
        _ = try a.waitFor("done", id: "w")
    }

    /// 8. Coordinators sharing a purpose do not block each other; with different purposes they do.
    /// The purpose can be set once, and not on a presenter's coordinator.
    @Test(arguments: Mode.allCases) func purposeIdentifiers(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let a = try world.participant(), b = try world.participant()
        a.send(Command.write("w1", f, [], ["coordinator": "ca", "purpose": "com.example.sync"]))
        _ = try a.waitFor("entered", id: "w1")
        b.send(Command.write("w2", f, [], ["coordinator": "cb", "purpose": "com.example.sync"]))
        _ = try b.waitFor("entered", id: "w2")
        b.send(Command.write("w3", f, [], ["coordinator": "cc", "purpose": "com.example.other"]))
        try world.waitForClaim(on: f)
        #expect(!b.sees("entered", id: "w3", within: 0.3))
        a.send(Command.release("w1"))
        b.send(Command.release("w2"))
        _ = try b.waitFor("entered", id: "w3")
        b.send(Command.release("w3"))

        a.send(["op": "set-purpose", "coordinator": "fresh", "purpose": "one"])
        a.send(["op": "set-purpose", "coordinator": "fresh", "purpose": "two"])
        let answers = try waitForCount(a, "purpose", 2)
        #expect(answers[0]["ok"]?.boolValue == true)
        #expect(answers[1]["ok"]?.boolValue == false)
        a.send(Command.presenter("p", f))
        _ = try a.waitFor("added")
        a.send(["op": "set-purpose", "coordinator": "withPresenter", "presenter": "p", "purpose": "three"])
        #expect(try waitForCount(a, "purpose", 3)[2]["ok"]?.boolValue == false)
        a.send(["op": "set-purpose", "coordinator": "empty", "purpose": ""])
        #expect(try waitForCount(a, "purpose", 4)[3]["ok"]?.boolValue == false)
    }

    /// 9. Cancelling a waiting coordination: its accessor never runs and it fails with
    /// NSUserCancelledError; cancelling while the accessor runs lets it finish.
    @Test(arguments: Mode.allCases) func cancel(mode: Mode) throws {
        let world = try Scenario(mode)
        let f = try world.file("f.txt")
        let a = try world.participant(), b = try world.participant()
        a.send(Command.write("w1", f, [], ["coordinator": "ca"]))
        _ = try a.waitFor("entered", id: "w1")
        b.send(Command.write("w2", f, [], ["coordinator": "cb"]))
        try world.waitForClaim(on: f)
        #expect(!b.sees("entered", id: "w2", within: 0.2))
        b.send(["op": "cancel", "coordinator": "cb"])
        let failed = try b.waitFor("failed", id: "w2")
        #expect(failed["domain"]?.stringValue == NSCocoaErrorDomain)
        #expect(failed["code"]?.intValue == Int64(CocoaError.Code.userCancelled.rawValue))
        a.send(["op": "cancel", "coordinator": "ca"])
        _ = try a.waitFor("cancelled")
        #expect(!a.sees("exited", id: "w1", within: 0.2), "cancel ended a running accessor")
        a.send(Command.release("w1"))
        _ = try a.waitFor("done", id: "w1")
        #expect(b.events.first { $0["event"]?.stringValue == "entered" && $0["id"]?.stringValue == "w2" } == nil)
    }
}

/// Waits until `count` events named `name` arrived, and returns them in order.
func waitForCount(_ participant: Participant, _ name: String, _ count: Int, timeout: Double = 10) throws -> [WireValue] {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        let found = participant.events.filter { $0["event"]?.stringValue == name }
        if found.count >= count { return found }
        usleep(5000)
    }
    throw TestFailure("fewer than \(count) \(name) events: \(participant.events)")
}
