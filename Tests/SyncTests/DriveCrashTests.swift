#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The drive's sync killed (SIGKILL) at its worst points and at random ones, on a local-folder
/// drive and on a WebDAV one (Apache): whatever the crash point, the newest local content stays the
/// file's content and is sent, or the newest remote one arrives — never an older one; what loses
/// the name is a version; and nothing is left in staging after the next pass.
@Suite("folio drive: crashes", .elasticPool)
struct DriveCrashTests {
    enum Server: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case folder, webdav
        var testDescription: String { rawValue }
        static var available: [Server] { TestServer.shouldRun(.apache) ? allCases : [.folder] }
    }

    /// One device's drive on a server, and the folder the server serves (where "another device"
    /// writes, as a server would store its upload).
    final class Rig: @unchecked Sendable {
        let home: TemporaryDirectory
        let environment: [String: String]
        let server: TestServer?
        let served: String
        var drive: String { FolioPaths(environment: environment).driveDirectory }

        init(_ kind: Server, _ name: String) throws {
            home = try TemporaryDirectory(name)
            var environment = home.xdgEnvironment()
            environment["FOLIO_PASSWORD"] = nil
            let setup: ProcessRunner.Output
            switch kind {
            case .folder:
                server = nil
                served = home.child("server").path
                try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
                setup = try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "folder", served], environment: environment)
            case .webdav:
                let server = try TestServer(.apache)
                self.server = server
                served = server.root!.path
                setup = try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "webdav", server.baseURL.absoluteString], environment: environment)
            }
            self.environment = environment
            #expect(setup.status == 0, "\(setup.stdout)\(setup.stderr)")
        }

        func folio(_ arguments: String..., crashAt point: String? = nil) throws -> ProcessRunner.Output {
            var environment = environment
            environment["FOLIO_SYNC_CRASH_AT"] = point
            return try ProcessRunner.folio(arguments, environment: environment)
        }

        /// A pass that must end well.
        func sync(_ comment: Comment? = nil) throws {
            let pass = try folio("drive", "sync")
            #expect(pass.status == 0, "\(comment?.description ?? "") \(pass.stdout)\(pass.stderr)")
        }

        func local(_ name: String) -> Data? { FileManager.default.contents(atPath: drive + "/" + name) }
        func remote(_ name: String) -> Data? { FileManager.default.contents(atPath: served + "/" + name) }

        /// An edit here as an editor makes it: in place, over the same file.
        func edit(_ name: String, _ data: Data) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: drive + "/" + name))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: data)
            try handle.close()
        }

        /// A new file here.
        func create(_ name: String, _ data: Data) throws {
            try data.write(to: URL(fileURLWithPath: drive + "/" + name))
        }

        /// What another device's upload leaves on the server (whole, as a server stores it).
        func serverWrite(_ name: String, _ data: Data) throws {
            try data.write(to: URL(fileURLWithPath: served + "/" + name), options: .atomic)
        }

        /// The contents of the document's unresolved conflict versions.
        func conflicts(_ name: String) throws -> [Data] {
            try versions(name).filter { $0["conflict"]?.boolValue == true && $0["resolved"]?.boolValue != true }
                .compactMap { $0["path"]?.stringValue }.compactMap { FileManager.default.contents(atPath: $0) }
        }

        /// The contents of all the document's versions.
        func versionContents(_ name: String) throws -> [Data] {
            try versions(name).compactMap { $0["path"]?.stringValue }.compactMap { FileManager.default.contents(atPath: $0) }
        }

        private func versions(_ name: String) throws -> [WireValue] {
            let output = try folio("versions", "list", drive + "/" + name, "--json")
            guard output.status == 0, let value = try? WireValue(parsing: Array(output.stdout.utf8)) else {
                throw TestFailure("folio versions list failed: \(output.stderr)")
            }
            return value["versions"]?.arrayValue ?? []
        }

        /// The files in the staging folder and in its folders (which a sweep keeps, emptied).
        func staging() -> [String] {
            let folder = drive + "/.folio-staging"
            return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).flatMap { name -> [String] in
                guard let inside = try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + name) else { return [name] }
                return inside.map { name + "/" + $0 }
            }
        }
    }

    /// A content of `count` bytes that names itself (`label`), so a failure says which one is where.
    static func content(_ label: String, _ count: Int) -> Data {
        var data = Data("\(label)\n".utf8)
        let line = Data(" \(label) ".utf8)
        while data.count < count { data.append(line) }
        return data.prefix(count)
    }

    static func label(_ data: Data?) -> String {
        guard let data else { return "nothing" }
        return String(decoding: data.prefix(40).prefix { $0 != 10 }, as: UTF8.self) + " (\(data.count) bytes)"
    }

    /// The issue's case and its mirror: killed as soon as a 40 MB upload completed, then edited
    /// (the edit wins and is sent; no conflict); killed as soon as a download took the file's
    /// place, then edited in place (the same); and killed as soon as an upload completed, then
    /// changed on the server only (the server's newer content arrives).
    @Test(arguments: Server.available)
    func anEditAfterACrashWins(server kind: Server) throws {
        let rig = try Rig(kind, "drive-crash-\(kind)")
        let size = 40 << 20
        try FileManager.default.createDirectory(atPath: rig.drive, withIntermediateDirectories: true)
        try rig.create("report.bin", Self.content("first", size))
        try rig.sync("first pass")

        try rig.edit("report.bin", Self.content("uploaded, then killed", size))
        let killed = try rig.folio("drive", "sync", crashAt: "uploaded")
        #expect(killed.status == SIGKILL, "the pass was not killed at the crash point: \(killed.stdout)\(killed.stderr)")
        #expect(Self.label(rig.remote("report.bin")) == Self.label(Self.content("uploaded, then killed", size)))
        let edited = Self.content("edited after the crash", size)
        try rig.edit("report.bin", edited)
        try rig.sync("after the upload crash")
        #expect(rig.local("report.bin") == edited, "\(Self.label(rig.local("report.bin")))")
        #expect(rig.remote("report.bin") == edited, "\(Self.label(rig.remote("report.bin")))")
        #expect(try rig.conflicts("report.bin").isEmpty, "the server's copy of this device's own upload was kept as a conflict")

        let elsewhere = Self.content("from another device", size)
        try rig.serverWrite("report.bin", elsewhere)
        let placed = try rig.folio("drive", "sync", crashAt: "placed")
        #expect(placed.status == SIGKILL, "the pass was not killed at the crash point: \(placed.stdout)\(placed.stderr)")
        #expect(rig.local("report.bin") == elsewhere)
        let editedAgain = Self.content("edited after the download", size)
        try rig.edit("report.bin", editedAgain)
        try rig.sync("after the download crash")
        #expect(rig.local("report.bin") == editedAgain, "\(Self.label(rig.local("report.bin")))")
        #expect(rig.remote("report.bin") == editedAgain, "\(Self.label(rig.remote("report.bin")))")
        #expect(try rig.conflicts("report.bin").isEmpty)

        // Killed once an upload completed, not edited here since, and changed on the server by
        // another device: the other device's content is newer, and arrives.
        try rig.edit("report.bin", Self.content("uploaded, then killed again", size))
        #expect(try rig.folio("drive", "sync", crashAt: "uploaded").status == SIGKILL)
        let later = Self.content("changed elsewhere after the crash", size)
        try rig.serverWrite("report.bin", later)
        try rig.sync("after the upload crash, changed elsewhere")
        #expect(rig.local("report.bin") == later, "\(Self.label(rig.local("report.bin")))")
        #expect(rig.remote("report.bin") == later, "\(Self.label(rig.remote("report.bin")))")
        #expect(rig.staging().isEmpty, "\(rig.staging())")
    }

    /// Killed once a file new here took its place (over WebDAV, where the provider finished it:
    /// the note and the rename run in that job) and before a base recorded it, then edited in
    /// place: the edit is made on this device's own download, so it is sent over the server's
    /// content, with no conflict kept.
    @Test(arguments: Server.available)
    func anEditOfANewFileAfterACrashWins(server kind: Server) throws {
        let rig = try Rig(kind, "drive-crash-new-\(kind)")
        try FileManager.default.createDirectory(atPath: rig.drive, withIntermediateDirectories: true)
        try rig.sync("first pass")
        #expect(try rig.folio("drive", "pin", rig.drive).status == 0)
        let arrived = Self.content("new from another device", 64 << 10)
        try rig.serverWrite("notes.bin", arrived)
        let placed = try rig.folio("drive", "sync", crashAt: "placed")
        #expect(placed.status == SIGKILL, "the pass was not killed at the crash point: \(placed.stdout)\(placed.stderr)")
        #expect(rig.local("notes.bin") == arrived)
        let edited = Self.content("edited after the download", 64 << 10)
        try rig.edit("notes.bin", edited)
        try rig.sync("after the download crash")
        #expect(rig.local("notes.bin") == edited, "\(Self.label(rig.local("notes.bin")))")
        #expect(rig.remote("notes.bin") == edited, "\(Self.label(rig.remote("notes.bin")))")
        #expect(try rig.conflicts("notes.bin").isEmpty, "this device's own download was kept as a conflict")
        #expect(rig.staging().isEmpty, "\(rig.staging())")
        // The killed pass's note was in the log; the passes since moved their notes into the journal.
        let log = FolioPaths(environment: rig.environment).stateDirectory + "/sync-unfinished-drive.log"
        #expect((try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) == 0, "the note log was not emptied")
    }

    /// 100 kills per server (200 in all) at random points of `folio drive sync` and of the daemon's passes,
    /// while files are uploaded, downloaded and edited (some during the pass). After each kill and
    /// a pass that ends: each file is the newest local content or the newest remote one, the same
    /// on both sides; when both changed, the other is a conflict version; what a download replaced
    /// is a version; staging is empty.
    @Test(arguments: Server.available)
    func killedAtRandomNothingOlderWins(server kind: Server) async throws {
        let rig = try Rig(kind, "drive-crash-loop-\(kind)")
        let names = ["notes.txt", "photo.bin", "archive.bin"]
        let sizes = ["notes.txt": 2_000, "photo.bin": 1 << 20, "archive.bin": 6 << 20]
        var seed = UInt64.random(in: 1...UInt64.max)
        if let fixed = ProcessInfo.processInfo.environment["FOLIO_CRASH_SEED"].flatMap(UInt64.init) { seed = fixed }
        var random = SplitMix(seed)
        try FileManager.default.createDirectory(atPath: rig.drive, withIntermediateDirectories: true)
        var synced: [String: Data] = [:]
        for name in names {
            synced[name] = Self.content("\(name) 0", sizes[name]!)
            try rig.create(name, synced[name]!)
        }
        try rig.sync("first pass")
        // A pass's usual length (of those that ended before their kill): the kill comes at a
        // random point of it.
        var passLength = Duration.milliseconds(300)
        var kills = 0, round = 0
        while kills < 100, round < 300 {
            round += 1
            let context = "seed \(seed), round \(round)"
            // What changes this round: here, on the server, or both (perhaps on one file).
            var local: [String: Data] = [:], remote: [String: Data] = [:]
            let mode = random.next(5)
            if mode == 0 || mode == 2 || mode == 4 {
                let name = names[random.next(names.count)]
                local[name] = Self.content("\(name) local \(round)", sizes[name]! + random.next(5000))
            }
            if mode == 1 || mode == 2 {
                let name = names[random.next(names.count)]
                remote[name] = Self.content("\(name) remote \(round)", sizes[name]! + random.next(5000))
            }
            // Mode 4 edits during the pass; the others before it.
            for (name, data) in remote { try rig.serverWrite(name, data) }
            if mode != 4 { for (name, data) in local { try rig.edit(name, data) } }

            // Every fourth round kills the daemon in its pass; the others `folio drive sync`.
            let byDaemon = round % 4 == 0
            let process = Process()
            process.executableURL = ProcessRunner.folioExecutable()
            var environment = rig.environment
            environment["FOLIO_DRIVE_INTERVAL"] = "1"
            process.environment = environment
            process.arguments = byDaemon ? ["daemon"] : ["drive", "sync"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let started = ContinuousClock.now
            try process.run()
            let delay = Duration.microseconds(random.next(Int(passLength / .microseconds(1))))
            if mode == 4 {
                try await Task.sleep(for: delay / 2)
                for (name, data) in local { try rig.edit(name, data) }
                try await Task.sleep(for: delay / 2)
            } else {
                try await Task.sleep(for: delay)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal {
                kills += 1
            } else {
                passLength = (passLength + (ContinuousClock.now - started)) / 2
            }

            // The next passes end, and settle.
            try rig.sync(Comment(rawValue: context))
            try rig.sync(Comment(rawValue: context))
            for name in names {
                let now = rig.local(name)
                #expect(rig.remote(name) == now, "\(context): \(name) differs: here \(Self.label(now)), on the server \(Self.label(rig.remote(name)))")
                switch (local[name], remote[name]) {
                case (nil, nil):
                    #expect(now == synced[name], "\(context): \(name) is \(Self.label(now)), not \(Self.label(synced[name]))")
                case (.some(let newest), nil):
                    #expect(now == newest, "\(context): \(name) is \(Self.label(now)), not the newest \(Self.label(newest))")
                case (nil, .some(let newest)):
                    #expect(now == newest, "\(context): \(name) is \(Self.label(now)), not the newest \(Self.label(newest))")
                    // What the download replaced here is a version.
                    #expect(try rig.versionContents(name).contains(synced[name]!), "\(context): \(Self.label(synced[name])) of \(name) is not a version")
                case (.some(let mine), .some(let theirs)):
                    #expect(now == mine || now == theirs, "\(context): \(name) is \(Self.label(now)), neither the newest here nor on the server")
                    let other = now == mine ? theirs : mine
                    #expect(try rig.conflicts(name).contains(other), "\(context): \(Self.label(other)) of \(name) is not a conflict version")
                    #expect(try rig.folio("versions", "resolve", rig.drive + "/" + name, "--remove-others").status == 0)
                }
                synced[name] = now
            }
            #expect(rig.staging().isEmpty, "\(context): staging holds \(rig.staging())")
        }
        print("drive crash loop (\(kind)): \(kills) kills in \(round) rounds, seed \(seed)")
        // A round whose pass ended before its kill still checked the result, and did not count.
        #expect(kills == 100, "only \(kills) kills in \(round) rounds (seed \(seed))")
    }
}

/// A small seeded generator (SplitMix64), so a failing round can be run again (`FOLIO_CRASH_SEED`).
struct SplitMix {
    private var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(max(bound, 1)))
    }
}
