import Foundation
import FolioTesting
import FolioTestTraits
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio doctor` on machines with a fault of each kind seeded: each found, with what to fix, and
/// the exit status saying whether anything is a problem.
@Suite("folio doctor", .elasticPool)
struct DoctorTests {
    /// The doctor's findings by check: (state, text, fix).
    static func doctor(_ environment: [String: String], _ arguments: String...) throws -> (status: Int32, findings: [String: (state: String, text: String, fix: String?)]) {
        let run = try ProcessRunner.folio(["doctor", "--json"] + arguments, environment: environment)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: String]], "\(run.stdout) \(run.stderr)")
        var findings: [String: (String, String, String?)] = [:]
        for row in rows { findings[row["check"] ?? "?"] = (row["state"] ?? "?", row["text"] ?? "", row["fix"]) }
        return (run.status, findings)
    }

    /// A copy of /proc/sys with the limits given.
    static func sysctls(_ values: [String: Int], in dir: TemporaryDirectory) throws -> String {
        let root = dir.child("sys")
        for (name, value) in values {
            let file = root.appendingPathComponent(name.replacingOccurrences(of: ".", with: "/"))
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try "\(value)\n".write(to: file, atomically: true, encoding: .utf8)
        }
        return root.path
    }

    @Test func aRunningDaemonAndItsFaults() throws {
        let dir = try TemporaryDirectory("doctor-daemon")
        var environment = dir.xdgEnvironment()
        let daemon = try DaemonProcess(environment: environment)
        defer { daemon.stop() }
        _ = try daemon.waitForListening()

        let healthy = try Self.doctor(environment)
        #expect(healthy.findings["daemon"]?.state == "ok" && healthy.findings["daemon"]?.text.contains("pid \(daemon.process.processIdentifier)") == true)
        #expect(healthy.findings["permissions"]?.state == "ok")
        #expect(healthy.findings["inotify"]?.state == "ok" && healthy.findings["inotify"]?.text.contains("folders watched of") == true)
        #expect(healthy.findings["drive"]?.state == "ok" && healthy.findings["drive"]?.text.contains("no drive") == true)

        // Seeded: the config folder open to others, a watch limit below what the daemon watches,
        // user namespaces off, a drive whose folder is gone.
        let server = dir.child("server")
        try FileManager.default.createDirectory(at: server, withIntermediateDirectories: true)
        let setup = try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "folder", server.path], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        try FileManager.default.removeItem(at: server)
        #expect(chmod(dir.path + "/config/folio", 0o755) == 0)
        environment["FOLIO_SYSCTL_DIR"] = try Self.sysctls(["fs.inotify.max_user_watches": 1, "user.max_user_namespaces": 0], in: dir)
        let faulty = try Self.doctor(environment)
        #expect(faulty.status == 1)
        #expect(faulty.findings["permissions"]?.state == "problem" && faulty.findings["permissions"]?.fix == "chmod 700 \(dir.path)/config/folio")
        #expect(faulty.findings["inotify"]?.state == "problem" && faulty.findings["inotify"]?.fix?.contains("fs.inotify.max_user_watches=524288") == true)
        #expect(faulty.findings["sandbox"]?.state == "problem" && faulty.findings["sandbox"]?.text.contains("user namespaces are off") == true)
        #expect(faulty.findings["drive"]?.state == "problem" && faulty.findings["drive"]?.text.contains(server.path) == true)
        // --offline leaves the drive's server alone.
        #expect(try Self.doctor(environment, "--offline").findings["drive"] == nil)

        // A daemon that holds its lock but answers nothing (stopped).
        #expect(kill(daemon.process.processIdentifier, SIGSTOP) == 0)
        defer { kill(daemon.process.processIdentifier, SIGCONT) }
        let stuck = try Self.doctor(environment, "--offline")
        #expect(stuck.findings["daemon"]?.state == "problem" && stuck.findings["daemon"]?.text.contains("does not answer") == true)
    }

    @Test func noDaemonNoToolsNoDatabase() throws {
        let dir = try TemporaryDirectory("doctor-bare")
        var environment = dir.xdgEnvironment()
        // A socket left by a daemon that is gone.
        let socketFolder = dir.path + "/run/folio"
        try FileManager.default.createDirectory(atPath: socketFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let left = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", socketFolder + "/folio.sock"])
        #expect(left.status == 0, "\(left.stderr)")
        // Nothing on PATH, no MIME database, no thumbnailers.
        environment["PATH"] = dir.child("bin").path
        environment["XDG_DATA_DIRS"] = dir.child("share").path
        let bare = try Self.doctor(environment)
        #expect(bare.status == 1)
        #expect(bare.findings["daemon"]?.state == "warning" && bare.findings["daemon"]?.text.contains("a socket was left") == true)
        #expect(bare.findings["sandbox"]?.state == "problem" && bare.findings["sandbox"]?.fix == "sudo apt-get install bubblewrap")
        #expect(bare.findings["text"]?.state == "warning" && bare.findings["text"]?.fix == "sudo apt-get install poppler-utils unzip util-linux")
        #expect(bare.findings["thumbnails"]?.state == "warning")
        #expect(bare.findings["types"]?.state == "warning" && bare.findings["types"]?.fix == "sudo apt-get install shared-mime-info")
        #expect(bare.findings["inotify"]?.state == "ok")
    }
}
