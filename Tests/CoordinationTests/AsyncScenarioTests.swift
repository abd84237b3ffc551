import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// apple-semantics §9 scenarios 19–21: intents, uploading snapshots, symbolic links.
@Suite("Coordination: intents, uploads, links (§9 19–21)", .elasticPool)
struct AsyncScenarioTests {
    /// 19. `coordinate(with:queue:)` calls the accessor once, on the queue, with nil; an intent's URL
    /// follows a move made while it waited.
    @Test(arguments: Mode.allCases) func intents(mode: Mode) throws {
        let world = try Scenario(mode)
        let a = try world.file("a.txt")
        let b = try world.file("b.txt")
        let moved = world.path("a-moved.txt")
        let p = try world.participant(), q = try world.participant()
        p.send(["op": "intents", "id": "i1", "intents": [["path": .string(a)], ["path": .string(b), "write": true]]])
        let first = try p.waitFor("intents", id: "i1")
        #expect(first["onQueue"]?.boolValue == true && first["calls"]?.intValue == 1)
        p.send(Command.release("i1"))
        _ = try p.waitFor("exited", id: "i1")

        q.send(Command.write2("mv", a, .forMoving, moved, .forReplacing))
        _ = try q.waitFor("entered", id: "mv")
        p.send(["op": "intents", "id": "i2", "intents": [["path": .string(a)]]])
        try world.waitForClaim(on: a)
        #expect(!p.sees("intents", id: "i2", within: 0.2))
        q.send(["op": "move", "id": "mv", "from": .string(a), "to": .string(moved)])
        _ = try q.waitFor("moved", id: "mv")
        q.send(Command.release("mv"))
        let entered = try p.waitFor("entered", id: "i2")
        #expect(entered["urls"]?.arrayValue?.first?.stringValue == moved)
        p.send(Command.release("i2"))
        _ = try p.waitFor("exited", id: "i2")
        #expect(try waitForCount(p, "intents", 2)[1]["calls"]?.intValue == 1)
    }

    /// 20. A read `.forUploading` of a folder passes a zip, removed afterwards; a writer waiting
    /// for the folder proceeds once the snapshot exists.
    @Test(arguments: Mode.allCases) func uploadingSnapshot(mode: Mode) throws {
        let world = try Scenario(mode)
        let d = try world.folder("Pack")
        _ = try world.file("Pack/one.txt", "one")
        _ = try world.file("Pack/sub/two.txt", "two")
        let u = try world.participant(), w = try world.participant()
        u.send(Command.read("up", d, .forUploading))
        let entered = try u.waitFor("entered", id: "up")
        #expect(entered["zip"]?.boolValue == true)
        let snapshot = try #require(entered["urls"]?.arrayValue?.first?.stringValue)
        #expect(snapshot.hasSuffix("/Pack.zip") && snapshot != d)
        if let unzip = ProcessRunner.which("unzip") {
            let listing = try ProcessRunner.run(URL(fileURLWithPath: unzip), ["-l", snapshot])
            #expect(listing.stdout.contains("Pack/sub/two.txt"))
            let check = try ProcessRunner.run(URL(fileURLWithPath: unzip), ["-t", snapshot])
            #expect(check.status == 0, "\(check.stdout)")
        }
        w.send(Command.write("w", d))
        _ = try w.waitFor("entered", id: "w")  // while the uploader still holds its snapshot
        w.send(Command.release("w"))
        u.send(Command.release("up"))
        _ = try u.waitFor("done", id: "up")
        #expect(!FileManager.default.fileExists(atPath: snapshot))
    }

    /// 21. A read with `.resolvesSymbolicLink` gets the link's target.
    @Test(arguments: Mode.allCases) func resolvesSymbolicLink(mode: Mode) throws {
        let world = try Scenario(mode)
        let target = try world.file("target.txt")
        let link = world.path("link.txt")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "target.txt")
        let r = try world.participant()
        r.send(Command.read("r", link, .resolvesSymbolicLink, ["hold": false]))
        #expect(try r.waitFor("entered", id: "r")["urls"]?.arrayValue?.first?.stringValue == target)
        r.send(Command.read("plain", link, [], ["hold": false]))
        #expect(try r.waitFor("entered", id: "plain")["urls"]?.arrayValue?.first?.stringValue == link)
    }
}
