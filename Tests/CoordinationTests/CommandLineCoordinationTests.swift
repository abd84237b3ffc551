import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// `folio coordinate` and `folio status` against a real daemon.
@Suite("folio coordinate and folio status", .elasticPool)
struct CommandLineCoordinationTests {
    @Test func shellCommandsTakePartInCoordination() throws {
        let world = try Scenario(.processes)
        let f = try world.file("f.txt")
        let p = try world.participant()
        p.send(Command.presenter("P", f, ["save": "write"]))
        _ = try p.waitFor("added")

        // A read asks the presenter to save first, so the command sees the saved content.
        let read = try ProcessRunner.folio(["coordinate", "read", f, "--", "cat", f], environment: world.environment)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "saved by P\n")

        // A writer holding the file shows in `folio status`; a reader waits for it.
        let holder = Process()
        holder.executableURL = ProcessRunner.folioExecutable()
        holder.arguments = ["coordinate", "write", f, "--", "sleep", "3"]
        holder.environment = world.environment
        try holder.run()
        var status = ""
        for _ in 0..<100 where !status.contains("granted") {
            status = try ProcessRunner.folio(["status"], environment: world.environment).stdout
            usleep(20_000)
        }
        #expect(status.contains("granted") && status.contains("write(0) \(f)"), "\(status)")
        #expect(status.contains("presenters: 1"))
        let started = Date()
        let after = try ProcessRunner.folio(["coordinate", "read", "--without-changes", f, "--", "true"], environment: world.environment)
        holder.waitUntilExit()
        #expect(after.status == 0)
        #expect(Date().timeIntervalSince(started) > 0.3, "the read did not wait for the writer")
        let json = try ProcessRunner.folio(["status", "--json"], environment: world.environment)
        #expect(json.stdout.hasPrefix("{") && json.stdout.contains(#""claims":[]"#))

        // A move reported to the presenter; the command's exit status passes through.
        let g = world.path("g.txt")
        let move = try ProcessRunner.folio(["coordinate", "move", f, g, "--", "mv", f, g], environment: world.environment)
        #expect(move.status == 0, "\(move.stderr)")
        #expect(try p.waitFor("presenter", callback: "didMove", presenter: "P")["to"]?.stringValue == g)
        let failing = try ProcessRunner.folio(["coordinate", "write", g, "--", "sh", "-c", "exit 3"], environment: world.environment)
        #expect(failing.status == 3)
    }

    @Test func statusWithoutADaemonSaysSo() throws {
        let dir = try TemporaryDirectory("nodaemon")
        let result = try ProcessRunner.folio(["status"], environment: dir.xdgEnvironment())
        #expect(result.status != 0)
        #expect(result.stderr.contains("no Folio daemon answers"))
        let local = try ProcessRunner.folio(["coordinate", "read", dir.path, "--", "true"], environment: dir.xdgEnvironment())
        #expect(local.status == 0)
        #expect(local.stderr.contains("coordinating within this process only"))
    }
}
