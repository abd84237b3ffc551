import Foundation
import FolioTesting
import FolioTestTraits
import Testing

/// `folio daemon --background` and `--stop`, as a shell uses them.
@Suite("folio daemon --background and --stop", .elasticPool)
struct DaemonControlTests {
    /// `--stop` returns once the daemon's process has ended, not when it lets its lock go (it
    /// unmounts and flushes after that): a script that stops it and then removes its folders, or
    /// starts another, finds it gone.
    @Test func stopReturnsOnceTheProcessIsGone() throws {
        let dir = try TemporaryDirectory("daemon-stop")
        let environment = dir.xdgEnvironment()
        try FileManager.default.createDirectory(atPath: environment["XDG_RUNTIME_DIR"]!, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A drive whose folder the daemon mounts (where FUSE can): unmounting is part of its stop.
        let server = dir.child("server")
        try FileManager.default.createDirectory(at: server, withIntermediateDirectories: true)
        let setup = try ProcessRunner.folio(["drive", "setup", "folder", server.path], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        for round in 1...3 {
            let started = try ProcessRunner.folio(["daemon", "--background"], environment: environment)
            #expect(try ProcessRunner.folio(["drive", "status"], environment: environment).status == 0)
            #expect(started.status == 0, "\(started.stderr)")
            let pid = try #require(started.stdout.range(of: "(pid ").map { started.stdout[$0.upperBound...].prefix { $0.isNumber } }.flatMap { Int32($0) })
            let stopped = try ProcessRunner.folio(["daemon", "--stop"], environment: environment)
            #expect(stopped.status == 0 && stopped.stdout.contains("folio daemon stopped (pid \(pid))"), "\(stopped.stdout) \(stopped.stderr)")
            // Gone: no process, or one that has ended and waits to be reaped.
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)).map { $0[$0.index(after: $0.lastIndex(of: ")")!)...].dropFirst().prefix(1) }
            #expect(state == nil || state == "Z", "round \(round): pid \(pid) is still running (state \(state ?? "?")) after --stop returned")
        }
        let none = try ProcessRunner.folio(["daemon", "--stop"], environment: environment)
        #expect(none.status == 0 && none.stdout.contains("no folio daemon is running"))
    }
}
