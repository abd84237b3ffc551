import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// What only real processes can show: a killed claim holder or presenter releases everything at
/// once, opposite-order pairs never deadlock, and a presenter that never answers times out.
@Suite("Coordination: across processes", .elasticPool)
struct CrossProcessTests {
    @Test func killedClaimHolderReleasesAtOnce() throws {
        let world = try Scenario(.processes)
        let f = try world.file("f.txt")
        let holder = try world.participant(), waiter = try world.participant()
        holder.send(Command.write("w", f))
        _ = try holder.waitFor("entered", id: "w")
        waiter.send(Command.write("next", f))
        try world.waitForClaim(on: f)
        #expect(!waiter.sees("entered", id: "next", within: 0.3))
        let killedAt = MonotonicClock.now()
        holder.kill9()
        let entered = try waiter.waitFor("entered", id: "next", timeout: 5)
        #expect(entered.t - killedAt < 2_000_000_000, "the claim outlived its process by \(entered.t - killedAt) ns")
        waiter.send(Command.release("next"))
    }

    @Test func killedPresenterNoLongerHoldsUpCoordination() throws {
        let world = try Scenario(.processes)
        let f = try world.file("f.txt")
        let presenter = try world.participant(), writer = try world.participant()
        presenter.send(Command.presenter("STUCK", f, ["relinquish": "never"]))
        _ = try presenter.waitFor("added")
        writer.send(Command.write("w", f))
        _ = try presenter.waitFor("presenter", callback: "relinquishToWriter")
        try world.waitForClaim(on: f, in: "messaging")
        #expect(!writer.sees("entered", id: "w", within: 0.3))
        presenter.kill9()
        _ = try writer.waitFor("entered", id: "w", timeout: 5)
        writer.send(Command.release("w"))
        // A later coordination does not wait for the dead presenter either.
        writer.send(Command.write("again", f))
        _ = try writer.waitFor("entered", id: "again", timeout: 5)
        writer.send(Command.release("again"))
    }

    @Test func oppositeOrderPairsNeverDeadlock() throws {
        let world = try Scenario(.processes)
        let a = try world.file("a.txt"), b = try world.file("b.txt")
        let one = try world.participant(), two = try world.participant()
        for round in 0..<40 {
            one.send(Command.write2("x\(round)", a, [], b, [], ["hold": false]))
            two.send(Command.write2("y\(round)", b, [], a, [], ["hold": false]))
        }
        _ = try waitForCount(one, "done", 40, timeout: 30)
        _ = try waitForCount(two, "done", 40, timeout: 30)
        // Never inside together.
        let spans = [one, two].flatMap { participant in
            participant.events.filter { $0["event"]?.stringValue == "entered" }.map { entered -> (Int64, Int64) in
                let exited = participant.events.first {
                    $0["event"]?.stringValue == "exited" && $0["id"]?.stringValue == entered["id"]?.stringValue
                }
                return (entered.t, exited?.t ?? .max)
            }
        }.sorted { $0.0 < $1.0 }
        for (earlier, later) in zip(spans, spans.dropFirst()) { #expect(earlier.1 <= later.0) }
    }

    @Test(arguments: Mode.allCases) func silentPresenterTimesOut(mode: Mode) throws {
        let world = try Scenario(mode, presenterTimeout: 1)
        let f = try world.file("f.txt")
        let presenter = try world.participant(), writer = try world.participant()
        presenter.send(Command.presenter("SILENT", f, ["relinquish": "never"]))
        _ = try presenter.waitFor("added")
        writer.send(Command.write("w", f))
        let failed = try writer.waitFor("failed", id: "w", timeout: 10)
        #expect(failed["domain"]?.stringValue == NSCocoaErrorDomain)
        #expect(failed["code"]?.intValue == Int64(CocoaError.Code.fileLocking.rawValue))
        let message = failed["message"]?.stringValue ?? ""
        #expect(message.contains("did not answer") && message.contains(f), "\(message)")
        if mode != .local {
            #expect(world.daemonLogs("presenter did not answer"), "\(world.daemonLog)")
        }
        // The claim is gone: the next writer waits for the silent presenter again, and fails again
        // rather than hanging.
        writer.send(Command.write("w2", f))
        _ = try writer.waitFor("failed", id: "w2", timeout: 10)
    }

    /// After the daemon restarts, a client reconnects on its next coordination and registers its
    /// presenters again.
    @Test func clientsReconnectAfterADaemonRestart() throws {
        let world = try Scenario(.daemon)
        let f = try world.file("f.txt")
        let p = try world.participant()
        p.send(Command.presenter("P", f))
        _ = try p.waitFor("added")
        try world.restartDaemon()
        p.send(Command.write("w", f, [], ["hold": false]))
        _ = try p.waitFor("done", id: "w")
        let q = try world.participant()
        q.send(Command.write("other", f, [], ["hold": false]))
        _ = try q.waitFor("done", id: "other")
        _ = try p.waitFor("presenter", callback: "didChange", presenter: "P")
    }
}
