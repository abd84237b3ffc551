#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioSync
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The drive with files on demand (issue 23), through a real daemon: it mounts the drive's folder,
/// every program sees the files under their names and reads them on demand, the index still knows
/// which are downloaded, and a daemon killed while readers wait leaves none hanging.
@Suite("The drive's files on demand", .elasticPool, .enabled(if: fuseMounts, "needs /dev/fuse, and root or fusermount3"))
struct DriveOnDemandTests {
    /// Runs a program to its end.
    func run(_ arguments: String...) throws -> ProcessRunner.Output {
        try ProcessRunner.run(URL(fileURLWithPath: ExecutableSearch.locate(arguments[0])!), Array(arguments.dropFirst()))
    }

    func status(_ path: String) throws -> String {
        try run("getfattr", "--only-values", "-n", "user.folio.status", path).stdout
    }

    /// Whether users other than root may open `/dev/fuse` (mode 0666 on most systems; some
    /// containers keep it 0600, and fusermount3 opens it as the user).
    static var fuseIsOpenToUsers: Bool {
        var device = stat()
        return stat("/dev/fuse", &device) == 0 && device.st_mode & 0o006 == 0o006
    }

    static func found(_ predicate: String, in drive: String, _ environment: [String: String]) -> Set<String> {
        let output = try? ProcessRunner.folio(["query", predicate, "--scope", drive], environment: environment)
        return Set((output?.stdout ?? "").split(separator: "\n").map { ($0 as NSString).lastPathComponent })
    }

    /// A user with files on demand: `setup` prepares the server's side in the user's folder and
    /// returns what follows `folio drive setup` (`--files on-demand` is added); timed passes off;
    /// then the daemon started and the drive's folder mounted.
    struct Home {
        let dir: TemporaryDirectory
        let environment: [String: String]
        let daemon: DaemonProcess
        var drive: String { dir.child("data/folio/Drive").path }

        init(_ name: String, setup: (TemporaryDirectory) throws -> [String]) async throws {
            dir = try TemporaryDirectory(name)
            var environment = dir.xdgEnvironment()
            environment["FOLIO_DRIVE_INTERVAL"] = "3600"
            self.environment = environment
            let made = try ProcessRunner.folio(["drive", "setup", "--files", "on-demand"] + setup(dir), environment: environment)
            #expect(made.status == 0, "\(made.stdout)\(made.stderr)")
            daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
            _ = try daemon.waitForListening()
            let drive = dir.child("data/folio/Drive").path
            #expect(await eventually { DriveMountAvailability.isMounted(at: drive) }, "\(daemon.log)")
        }
    }

    @Test func programsReadTheDriveOnDemandThroughTheDaemon() async throws {
        let dir = try TemporaryDirectory("drive-on-demand")
        var environment = dir.xdgEnvironment()
        // No timed passes: a program's change through the mount is what starts one.
        environment["FOLIO_DRIVE_INTERVAL"] = "3600"
        let server = dir.child("server").path
        try FileManager.default.createDirectory(atPath: server, withIntermediateDirectories: true)
        // Not asked for: chosen for this machine, where FUSE mounts.
        let setup = try ProcessRunner.folio(["drive", "setup", "folder", server], environment: environment)
        #expect(setup.status == 0 && setup.stdout.contains("files: on demand, not mounted now: the daemon mounts the drive's folder while it runs (folio daemon --background); chosen: FUSE mounts here"), "\(setup.stdout)\(setup.stderr)")
        let daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
        defer { daemon.stop() }
        _ = try daemon.waitForListening()
        let drive = dir.child("data/folio/Drive").path
        #expect(await eventually { DriveMountAvailability.isMounted(at: drive) }, "\(daemon.log)")
        let shown = try ProcessRunner.folio(["drive", "status"], environment: environment)
        #expect(shown.stdout.contains("files: on demand: the daemon has mounted \(drive)"), "\(shown.stdout)\(shown.stderr)")

        // A file that appears on the server shows under its own name, its size, no blocks.
        let content = String(repeating: "from elsewhere ", count: 1000)
        try Data(content.utf8).write(to: URL(fileURLWithPath: server + "/remote.txt"))
        let pass = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(pass.status == 0, "\(pass.stderr)")
        #expect(FileManager.default.fileExists(atPath: drive + "/remote.txt"), "\(daemon.log)")
        #expect(try run("stat", "-c", "%s %b", drive + "/remote.txt").stdout == "\(content.utf8.count) 0\n")
        #expect(try run("ls", "-A", drive).stdout == "remote.txt\n")
        #expect(try status(drive + "/remote.txt") == "cloud")
        // `folio drive` reads the replica beneath the mount, where the daemon says it is.
        let listed = try ProcessRunner.folio(["drive", "status", drive + "/remote.txt"], environment: environment)
        #expect(listed.status == 0 && listed.stdout == "cloud\tremote.txt\n", "\(listed.stdout)\(listed.stderr)")
        let counted = try ProcessRunner.folio(["drive", "status"], environment: environment)
        #expect(counted.stdout.contains("files: 0 local, 1 in the cloud, 0 waiting to upload"), "\(counted.stdout)\(counted.stderr)")
        // The daemon's index sees the replica beneath: not downloaded.
        #expect(await eventually { Self.found("NSMetadataUbiquitousItemPercentDownloadedKey == 0", in: drive, environment) == ["remote.txt"] }, "\(daemon.log)")

        // Read by a program that knows nothing of Folio: downloaded on the way.
        let read = try run("cat", drive + "/remote.txt")
        #expect(read.status == 0 && read.stdout == content, "\(read.stderr)")
        // The status says downloading until the download has noted what it placed, a moment
        // after the last byte the program read.
        #expect(await eventually { (try? self.status(drive + "/remote.txt")) == "local" })
        #expect(try ProcessRunner.folio(["drive", "status", drive + "/remote.txt"], environment: environment).stdout == "local\tremote.txt\n")
        #expect(await eventually { Self.found("NSMetadataUbiquitousItemPercentDownloadedKey == 100", in: drive, environment) == ["remote.txt"] }, "\(daemon.log)")

        // Pinned, then evicted: the state any program reads; evicted, the file stays listed.
        #expect(try ProcessRunner.folio(["drive", "pin", drive + "/remote.txt"], environment: environment).status == 0)
        #expect(try status(drive + "/remote.txt") == "pinned")
        #expect(try ProcessRunner.folio(["drive", "unpin", drive + "/remote.txt"], environment: environment).status == 0)
        let evicted = try ProcessRunner.folio(["drive", "evict", drive + "/remote.txt"], environment: environment)
        #expect(evicted.status == 0, "\(evicted.stdout)\(evicted.stderr)")
        #expect(try status(drive + "/remote.txt") == "cloud")
        #expect(try run("stat", "-c", "%s %b", drive + "/remote.txt").stdout == "\(content.utf8.count) 0\n")
        #expect(try run("cat", drive + "/remote.txt").stdout == content)
        // Its download ends after the reader may be done (placed, then noted): the daemon's stop
        // below must not come in between.
        #expect(await eventually { (try? self.status(drive + "/remote.txt")) == "local" })

        // A program's new file in the mount reaches the server by the daemon's passes.
        #expect(try run("sh", "-c", "echo 'made by a shell' > '\(drive)/made.txt'").status == 0)
        #expect(await eventually { FileManager.default.contents(atPath: server + "/made.txt") == Data("made by a shell\n".utf8) }, "\(daemon.log)")

        // Stopped, the daemon unmounts: the folder is the plain replica, every byte there.
        #expect(daemon.stop() == 0)
        #expect(!DriveMountAvailability.isMounted(at: drive))
        #expect(FileManager.default.contents(atPath: drive + "/remote.txt") == Data(content.utf8))
        #expect(FileManager.default.contents(atPath: drive + "/made.txt") == Data("made by a shell\n".utf8))
    }

    /// A program that knows nothing of coordination, opening a file through the mount, waits while
    /// an app's coordinated write holds it (the app's own writes through the mount do not), and
    /// reads what the write left, never its work half done.
    @Test func aProgramsOpenWaitsForACoordinatedWrite() async throws {
        let home = try await Home("drive-on-demand-claim") { dir in
            try FileManager.default.createDirectory(atPath: dir.child("server").path, withIntermediateDirectories: true)
            return ["folder", dir.child("server").path]
        }
        let environment = home.environment, daemon = home.daemon
        // Stopped (unmounted) while its folder is there.
        defer { home.daemon.stop() }
        let document = home.drive + "/notes.txt"
        #expect(try run("sh", "-c", "printf before > '\(document)'").status == 0)

        // An app (a real process, coordinating through the daemon) holds a write of the document.
        var appEnvironment = environment
        appEnvironment["FOLIO_COORDINATION"] = "daemon"
        let app = try BackgroundProcess(ProcessRunner.builtExecutable("FolioCoordinationHelper"), environment: appEnvironment)
        defer { app.stop() }
        try await app.wait(for: #""event":"ready""#)
        app.send(#"{"op": "write", "id": "w", "path": "\#(document)"}"#)
        try await app.wait(for: #""event":"entered""#)

        // A program's read waits: the daemon shows its open waiting on the write.
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [document]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        #expect(await eventually { ((try? ProcessRunner.folio(["status"], environment: environment))?.stdout ?? "").contains("pid \(reader.processIdentifier) for") }, "\(daemon.log)")
        #expect(reader.isRunning)

        // The app writes through the mount itself (its own open does not wait), then releases.
        app.send(#"{"op": "writefile", "id": "w", "path": "\#(document)", "text": "after the app's save"}"#)
        try await app.wait(for: #""event":"wrote""#)
        #expect(app.output.contains(#""ok":true"#), "\(app.output)")
        #expect(reader.isRunning)
        app.send(#"{"op": "release", "id": "w"}"#)
        try await app.wait(for: #""event":"exited""#)
        reader.waitUntilExit()
        #expect(reader.terminationStatus == 0, "\(daemon.log)")
        #expect(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "after the app's save")

        // The app presenting the document hears of a program's write through the mount.
        app.send(#"{"op": "presenter", "name": "P", "path": "\#(document)"}"#)
        try await app.wait(for: #""event":"added""#)
        #expect(try run("sh", "-c", "printf 'written by a shell' > '\(document)'").status == 0)
        try await app.wait(for: #""callback":"didChange""#)
    }

    /// A document's versions on the device of `environment`: each one's content, and whether it
    /// is an unresolved conflict.
    static func versions(_ path: String, _ environment: [String: String]) throws -> [(content: String, conflict: Bool)] {
        let output = try ProcessRunner.folio(["versions", "list", path, "--json"], environment: environment)
        guard output.status == 0, let value = try? WireValue(parsing: Array(output.stdout.utf8)) else {
            throw TestFailure("folio versions list failed: \(output.stdout)\(output.stderr)")
        }
        return (value["versions"]?.arrayValue ?? []).compactMap { version in
            guard let file = version["path"]?.stringValue, let data = FileManager.default.contents(atPath: file) else { return nil }
            return (String(decoding: data, as: UTF8.self), version["conflict"]?.boolValue == true && version["resolved"]?.boolValue != true)
        }
    }

    /// Two devices, each a daemon with the drive mounted, edit one document through their mounts
    /// with programs that know nothing of Folio: every byte stays. What a program wrote over is a
    /// version on its device; of the two edits one is the document on both devices, the other an
    /// unresolved conflict version, which any program sees as the document's status.
    @Test func twoDevicesEditingThroughTheirMountsKeepEveryByte() async throws {
        let dir = try TemporaryDirectory("drive-on-demand-two")
        let server = dir.child("server").path
        try FileManager.default.createDirectory(atPath: server, withIntermediateDirectories: true)
        var environments: [[String: String]] = []
        var daemons: [DaemonProcess] = []
        let homes = try ["one", "two"].map { try TemporaryDirectory("drive-on-demand-\($0)") }
        // Stopped (unmounted) before their folders go.
        defer { withExtendedLifetime(homes) { for daemon in daemons { daemon.stop() } } }
        for home in homes {
            var environment = home.xdgEnvironment()
            environment["FOLIO_DRIVE_INTERVAL"] = "3600"
            #expect(try ProcessRunner.folio(["drive", "setup", "folder", server, "--files", "on-demand"], environment: environment).status == 0)
            let daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
            daemons.append(daemon)
            _ = try daemon.waitForListening()
            environments.append(environment)
        }
        let drives = environments.map { FolioPaths(environment: $0).driveDirectory }
        for drive in drives { #expect(await eventually { DriveMountAvailability.isMounted(at: drive) }) }
        let documents = drives.map { $0 + "/plan.txt" }
        func sync(_ device: Int) throws {
            let pass = try ProcessRunner.folio(["drive", "sync"], environment: environments[device])
            #expect(pass.status == 0, "\(pass.stdout)\(pass.stderr)")
        }

        // Written on one, read on two (downloaded on the way).
        #expect(try run("sh", "-c", "printf 'the first draft' > '\(documents[0])'").status == 0)
        try sync(0)
        try sync(1)
        #expect(try run("cat", documents[1]).stdout == "the first draft")

        // Both edit it, by an editor's save (a new file renamed over) and by a shell writing over it.
        #expect(try run("sh", "-c", "printf 'edited on one' > '\(documents[0]).tmp' && mv '\(documents[0]).tmp' '\(documents[0])'").status == 0)
        #expect(try run("sh", "-c", "printf 'edited on two' > '\(documents[1])'").status == 0)
        // What each wrote over is kept where it was written.
        for device in 0..<2 {
            let listed = try ProcessRunner.folio(["versions", "list", documents[device], "--json"], environment: environments[device])
            #expect(try Self.versions(documents[device], environments[device]).map(\.content).contains("the first draft"), "\(listed)\n\(daemons[device].log)")
        }

        // Passes on both, until they agree.
        try sync(0)
        try sync(1)
        try sync(0)
        let one = try #require(FileManager.default.contents(atPath: documents[0])), two = try #require(FileManager.default.contents(atPath: documents[1]))
        #expect(one == two)
        let kept = String(decoding: one, as: UTF8.self)
        #expect(["edited on one", "edited on two"].contains(kept))
        let other = kept == "edited on one" ? "edited on two" : "edited on one"
        let conflicts = try (0..<2).map { device in try Self.versions(documents[device], environments[device]).filter(\.conflict).map(\.content) }
        #expect(conflicts.joined().contains(other), "\(conflicts)")
        let holder = conflicts[0].contains(other) ? 0 : 1
        #expect(try status(documents[holder]) == "conflict")
    }

    /// A drive on a provider program (the Python example over a folder) with files on demand: the
    /// program writes what it fetches beneath the mount, where the daemon's descriptor of the
    /// replica reaches, and a read through the mount gets it.
    @Test func aProviderProgramFetchesBeneathTheMount() async throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Examples/PythonProvider/folder_provider.py")
        let content = String(repeating: "fetched by a program ", count: 500)
        let home = try await Home("drive-on-demand-provider") { dir in
            let served = dir.child("served").path
            try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
            try Data(content.utf8).write(to: URL(fileURLWithPath: served + "/far.txt"))
            return ["provider", example.path, "--", served]
        }
        let daemon = home.daemon, drive = home.drive
        defer { home.daemon.stop() }
        #expect(await eventually(30) { FileManager.default.fileExists(atPath: drive + "/far.txt") }, "\(daemon.log)")
        #expect(try status(drive + "/far.txt") == "cloud")
        let read = try run("cat", drive + "/far.txt")
        #expect(read.status == 0 && read.stdout == content, "\(read.stderr)\n\(daemon.log)")
    }

    /// A program's read of a file not downloaded is not kept waiting by a pass sending another
    /// file (a large upload, a slow link): the download runs beside the pass, which ends after it.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aReadIsNotKeptWaitingByAPassSendingAnotherFile() async throws {
        let server = try TestServer(.apache)
        let proxy = try FaultProxy(upstreamPort: server.port)
        let home = try await Home("drive-on-demand-beside") { _ in
            try Data("kept far away".utf8).write(to: server.root!.appendingPathComponent("far.txt"))
            server.fixOwnership()
            return ["webdav", proxy.baseURL.absoluteString]
        }
        let daemon = home.daemon, drive = home.drive
        defer { home.daemon.stop() }
        #expect(await eventually(30) { FileManager.default.fileExists(atPath: drive + "/far.txt") }, "\(daemon.log)")
        #expect(try status(drive + "/far.txt") == "cloud")

        // A pass sends a new file, held on its way to the server.
        let gate = FaultProxy.Gate()
        defer { gate.open() }
        proxy.add(.init(method: "PUT", pathContains: "sent.txt", action: .hold(gate), times: 1))
        #expect(try run("sh", "-c", "echo sending > '\(drive)/sent.txt'").status == 0)
        #expect(await eventually(30) { gate.held == 1 }, "\(daemon.log)")
        // The read is served while the pass still waits (a read waiting for the pass would end
        // only at the timeout's kill).
        let read = try run("timeout", "20", "cat", drive + "/far.txt")
        #expect(read.status == 0 && read.stdout == "kept far away", "\(read.status) \(read.stderr)\n\(daemon.log)")
        #expect(gate.held == 1, "the pass had ended")
        #expect(await eventually { (try? self.status(drive + "/far.txt")) == "local" })
        // The pass goes on to its end.
        gate.open()
        let sent = server.root!.appendingPathComponent("sent.txt").path
        #expect(await eventually(30) { FileManager.default.contents(atPath: sent) == Data("sending\n".utf8) }, "\(daemon.log)")
        let shown = try ProcessRunner.folio(["drive", "status"], environment: home.environment)
        #expect(shown.stdout.contains("files: 2 local, 0 in the cloud, 0 waiting to upload"), "\(shown.stdout)\(shown.stderr)")
    }

    /// A program's read of a file not downloaded gets its first bytes when the server sends them,
    /// not when the whole file is here; the rest as it arrives; and an error, never a short file,
    /// when the download breaks off.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aProgramReadsAFileAsItArrives() async throws {
        let server = try TestServer(.apache)
        let proxy = try FaultProxy(upstreamPort: server.port)
        let content = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
        let home = try await Home("drive-on-demand-arriving") { _ in
            try content.write(to: server.root!.appendingPathComponent("arriving.bin"))
            try content.write(to: server.root!.appendingPathComponent("broken.bin"))
            try content.write(to: server.root!.appendingPathComponent("mapped.bin"))
            try content.write(to: server.root!.appendingPathComponent("copied.bin"))
            server.fixOwnership()
            return ["webdav", proxy.baseURL.absoluteString]
        }
        let daemon = home.daemon, drive = home.drive
        defer { home.daemon.stop() }
        #expect(await eventually(30) { FileManager.default.fileExists(atPath: drive + "/broken.bin") }, "\(daemon.log)")

        // The server sends 256 KiB and waits: a program reads the start meanwhile.
        let gate = FaultProxy.Gate()
        proxy.add(.init(method: "GET", pathContains: "arriving.bin", action: .pauseReply(after: 256 << 10, gate), times: 1))
        let start = try run("python3", "-c", "import sys; f = open(sys.argv[1], 'rb'); sys.stdout.write(f.read(100000).hex())", drive + "/arriving.bin")
        #expect(start.status == 0 && start.stdout == content.prefix(100_000).map { String(format: "%02x", $0) }.joined(), "\(start.stderr)\n\(daemon.log)")
        #expect(try status(drive + "/arriving.bin") == "downloading")
        // The rest comes as the server sends it.
        gate.open()
        let whole = try run("sha256sum", drive + "/arriving.bin")
        #expect(whole.stdout.prefix(64) == ContentDigest.sha256(of: content))

        // A download that breaks off: the reader gets an error, not the bytes that came.
        proxy.add(.init(method: "GET", pathContains: "broken.bin", action: .truncate(after: 1 << 20), times: 100))
        let broken = try run("cat", drive + "/broken.bin")
        #expect(broken.status != 0 && broken.stderr.contains("Input/output error"), "\(broken.stdout.count) bytes; \(broken.stderr)")

        // Mapped (shared, as Python's mmap and many readers do) while it arrives.
        let mapping = "import hashlib, mmap, sys; f = open(sys.argv[1], 'rb'); m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ); print(hashlib.sha256(m).hexdigest(), end='')"
        let mapped = try run("python3", "-c", mapping, drive + "/mapped.bin")
        #expect(mapped.status == 0 && mapped.stdout == ContentDigest.sha256(of: content), "\(mapped.stderr)")

        // Copied out by cp (copy_file_range, then its fallbacks) while it arrives, and back in.
        let copy = home.dir.child("copy.bin").path
        let copied = try run("cp", drive + "/copied.bin", copy)
        #expect(copied.status == 0 && FileManager.default.contents(atPath: copy) == content, "\(copied.stderr)")
        #expect(try run("cp", copy, drive + "/back.bin").status == 0)
        #expect(FileManager.default.contents(atPath: drive + "/back.bin") == content)
    }

    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aKilledDaemonHangsNoReaderAndTheNextOneMountsAgain() async throws {
        let server = try TestServer(.apache)
        let proxy = try FaultProxy(upstreamPort: server.port)
        let dir = try TemporaryDirectory("drive-on-demand-kill")
        var environment = dir.xdgEnvironment()
        environment["FOLIO_DRIVE_INTERVAL"] = "3600"
        let setup = try ProcessRunner.folio(["drive", "setup", "webdav", proxy.baseURL.absoluteString, "--files", "on-demand"], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        let names = (0..<10).map { "waited\($0).txt" }
        for name in names { try Data("the content of \(name)".utf8).write(to: server.root!.appendingPathComponent(name)) }
        server.fixOwnership()
        let drive = dir.child("data/folio/Drive").path
        var daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
        _ = try daemon.waitForListening()
        #expect(await eventually(60) { names.allSatisfy { FileManager.default.fileExists(atPath: drive + "/" + $0) } }, "\(daemon.log)")

        // Ten readers wait for downloads the server holds back.
        let gate = FaultProxy.Gate()
        proxy.add(.init(method: "GET", pathContains: "waited", action: .hold(gate), times: 100))
        let readers = try names.map { name in
            let reader = Process()
            reader.executableURL = URL(fileURLWithPath: "/bin/cat")
            reader.arguments = [drive + "/" + name]
            reader.standardOutput = FileHandle.nullDevice
            reader.standardError = FileHandle.nullDevice
            try reader.run()
            return reader
        }
        #expect(await eventually { names.allSatisfy { name in (try? self.status(drive + "/" + name)) == "downloading" } }, "\(daemon.log)")
        #expect(readers.allSatisfy { $0.isRunning })

        // Killed, the daemon leaves no reader waiting: each gets an error within a second.
        kill(daemon.process.processIdentifier, SIGKILL)
        daemon.process.waitUntilExit()
        let killed = ContinuousClock.now
        #expect(await eventually(1) { readers.allSatisfy { !$0.isRunning } }, "readers still waiting a second after the daemon died")
        for reader in readers where reader.isRunning { reader.terminate() }
        #expect(ContinuousClock.now - killed < .seconds(1))
        #expect(readers.allSatisfy { !$0.isRunning && $0.terminationStatus != 0 })
        // The dead mount answers at once, with an error.
        let dead = try run("ls", drive)
        #expect(dead.status != 0 && dead.stderr.contains("Transport endpoint is not connected"), "\(dead.stdout)\(dead.stderr)")

        // The next daemon clears the dead mount and mounts again; reads work.
        gate.open()
        daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"])
        defer { daemon.stop() }
        _ = try daemon.waitForListening()
        #expect(await eventually(30) { (try? run("cat", drive + "/waited3.txt").stdout) == "the content of waited3.txt" }, "\(daemon.log)")
        #expect(try run("ls", drive).stdout.split(separator: "\n").count == 10)
    }

    /// A user who is not root mounts through `fusermount3` (setuid root; Debian's `fuse3`), with no
    /// passthrough: reads go through the daemon, and the mount is the user's alone.
    @Test(.enabled(if: geteuid() == 0 && ExecutableSearch.locate("fusermount3") != nil && Self.fuseIsOpenToUsers, "needs root (to run as nobody), fusermount3, and /dev/fuse open to users"))
    func aUserWhoIsNotRootMountsThroughFusermount() async throws {
        let dir = try TemporaryDirectory("drive-on-demand-user")
        var environment = dir.xdgEnvironment()
        environment["FOLIO_DRIVE_INTERVAL"] = "3600"
        for folder in ["home", "data", "config", "state", "run", "server"] {
            try FileManager.default.createDirectory(atPath: dir.path + "/" + folder, withIntermediateDirectories: true)
        }
        _ = chmod(dir.path + "/run", 0o700)
        let content = String(repeating: "read through the daemon ", count: 4000)
        try Data(content.utf8).write(to: URL(fileURLWithPath: dir.path + "/server/far.txt"))
        #expect(try run("chown", "-R", "65534:65534", dir.path).status == 0)
        func asUser(_ arguments: [String]) throws -> ProcessRunner.Output {
            try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=65534", "--regid=65534", "--clear-groups"] + arguments, environment: environment)
        }
        let folio = ProcessRunner.folioExecutable().path
        let setup = try asUser([folio, "drive", "setup", "folder", dir.path + "/server", "--files", "on-demand"])
        #expect(setup.status == 0, "\(setup.stdout)\(setup.stderr)")
        let daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "info"], runAs: 65534)
        defer { daemon.stop() }
        _ = try daemon.waitForListening()
        let drive = dir.child("data/folio/Drive").path
        #expect(await eventually { DriveMountAvailability.isMounted(at: drive) }, "\(daemon.log)")
        #expect(try asUser([folio, "drive", "sync"]).status == 0)
        let read = try asUser(["/bin/cat", drive + "/far.txt"])
        #expect(read.status == 0 && read.stdout == content, "\(read.stderr)\n\(daemon.log)")
        #expect(daemon.log.contains("passthrough=false"), "\(daemon.log)")
        #expect(daemon.stop() == 0)
        #expect(!DriveMountAvailability.isMounted(at: drive), "\(daemon.log)")
    }
}
