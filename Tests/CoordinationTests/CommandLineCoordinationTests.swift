import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

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

        // A writer holding the file (until told to go) shows in `folio status`; a reader waits for it.
        let go = world.path("go")
        let holder = Process()
        holder.executableURL = ProcessRunner.folioExecutable()
        holder.arguments = ["coordinate", "write", f, "--", "sh", "-c", "while [ ! -e '\(go)' ]; do sleep 0.05; done"]
        holder.environment = world.environment
        try holder.run()
        var status = ""
        for _ in 0..<100 where !status.contains("granted") {
            status = try ProcessRunner.folio(["status"], environment: world.environment).stdout
            usleep(20_000)
        }
        #expect(status.contains("granted") && status.contains("write \(f)"), "\(status)")
        #expect(status.contains("presenters: 1"))
        let reader = Process()
        reader.executableURL = ProcessRunner.folioExecutable()
        reader.arguments = ["coordinate", "read", "--without-changes", f, "--", "true"]
        reader.environment = world.environment
        reader.standardOutput = FileHandle.nullDevice
        reader.standardError = FileHandle.nullDevice
        try reader.run()
        // The reader's claim waits behind the writer's, and the reader with it.
        try world.waitForClaim(on: f)
        #expect(reader.isRunning && holder.isRunning, "the read did not wait for the writer")
        // Both claims shown, each under its own number (each client numbers its claims from 1),
        // with the access spelled out.
        let both = try ProcessRunner.folio(["status"], environment: world.environment).stdout
        let labels = both.split(separator: "\n").filter { $0.hasPrefix("  claim ") }.map { $0.split(separator: " ")[1] }
        #expect(labels.count == 2 && Set(labels).count == 2, "\(both)")
        // `--without-changes` after the access is the option, not a file to claim.
        #expect(both.contains("read withoutChanges \(f)") && !both.contains("--without-changes"), "\(both)")
        // The daemon's own client is named as such.
        #expect(both.split(separator: "\n").filter { $0.contains("the daemon's own coordinations") }.count == 1, "\(both)")
        #expect(FileManager.default.createFile(atPath: go, contents: nil))
        holder.waitUntilExit()
        reader.waitUntilExit()
        #expect(holder.terminationStatus == 0 && reader.terminationStatus == 0)
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

    /// The command runs in a process group that cannot outlive the claim: `folio` killed with
    /// SIGKILL takes the command and what it started with it (nothing writes after the claim
    /// ended); SIGTERM is passed on and the command's status comes back; what the command leaves
    /// running when it ends is ended too.
    @Test func theCommandNeverOutlivesItsClaim() async throws {
        let world = try Scenario(.processes)
        let f = try world.file("f.txt")
        let pids = world.path("pids")

        // SIGKILL: the shell and its background child were about to write.
        let killed = try startCoordinate(
            world, f, "(sleep 1; echo background >> '\(f)') & echo $$ $! > '\(pids).new' && mv '\(pids).new' '\(pids)'; sleep 1; echo late >> '\(f)'")
        #expect(await eventually { FileManager.default.fileExists(atPath: pids) })
        let started = try String(contentsOfFile: pids, encoding: .utf8).split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(started.count == 2)
        try world.waitForClaim(on: f, in: "granted")
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        // Once both are gone they can write nothing more: then the file must be as it was.
        #expect(await eventually(10) { started.allSatisfy { !isAlive($0) } }, "the command outlived folio")
        #expect(try String(contentsOfFile: f, encoding: .utf8) == "original\n")
        #expect(await eventually { (try? world.claims().isEmpty) == true })

        // SIGTERM: passed on to the command, whose trap runs; its status is folio's.
        let ready = world.path("ready")
        let terminated = try startCoordinate(
            world, f, "trap 'echo term >> \"\(f)\"; exit 3' TERM; touch '\(ready)'; while :; do sleep 0.05; done")
        #expect(await eventually { FileManager.default.fileExists(atPath: ready) })
        kill(terminated.processIdentifier, SIGTERM)
        terminated.waitUntilExit()
        #expect(terminated.terminationStatus == 3)
        #expect(try String(contentsOfFile: f, encoding: .utf8) == "original\nterm\n")

        // A command that ends leaves nothing running behind it.
        let leftover = world.path("leftover")
        let ended = try ProcessRunner.folio(
            ["coordinate", "write", f, "--", "sh", "-c", "(sleep 30; echo leftover >> '\(f)') & echo $! > '\(leftover)'"],
            environment: world.environment)
        #expect(ended.status == 0, "\(ended.stderr)")
        let background = Int32(try String(contentsOfFile: leftover, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(background > 0)
        #expect(await eventually(10) { !isAlive(background) }, "a process the command started outlived it")
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

/// Starts `folio coordinate write FILE -- sh -c SCRIPT` without waiting for it.
private func startCoordinate(_ world: Scenario, _ file: String, _ script: String) throws -> Process {
    let process = Process()
    process.executableURL = ProcessRunner.folioExecutable()
    process.arguments = ["coordinate", "write", file, "--", "sh", "-c", script]
    process.environment = world.environment
    try process.run()
    return process
}

/// Whether process `pid` runs (a zombie, which can do nothing more, counts as gone).
private func isAlive(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return false }
    let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
    return state != "Z" && state != "X"
}
