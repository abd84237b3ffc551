@testable import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

@Suite("The daemon's index: crawl, crash, hostile trees, identity", .elasticPool)
struct IndexCrawlTests {
    /// A crawl killed with SIGKILL in the middle: no folder is marked listed with children
    /// missing, and the next daemon resumes and completes the index.
    @Test func crashMidCrawlIsRecovered() async throws {
        // A crawl step takes at most 256 folders: 2,000 folders make eight steps, ten seconds apart
        // (a loaded machine may keep this test from polling for a while), and the kill lands
        // between two of them. The daemon after the kill crawls without a pause.
        let folders = 2000, perFolder = 5
        let world = try await IndexWorld("index-crash", stepDelay: 10_000) { dir in
            for folder in 0..<folders {
                for file in 0..<perFolder { try dir.write("docs/f\(folder)/n\(file).txt", "") }
            }
        }
        // Kill once some folders are listed and some are not.
        let deadline = Date().addingTimeInterval(60)
        var status = try world.send(IndexStatus())
        while Date() < deadline, (status["items"]?.intValue ?? 0) < 1000 {
            try await Task.sleep(for: .milliseconds(10))
            status = try world.send(IndexStatus())
        }
        world.kill()
        #expect((status["pending_folders"]?.intValue ?? 0) > 0, "the crawl finished before the kill: \(status)")
        // Every folder marked listed has exactly its children on disk.
        let listed = try world.sql("SELECT path FROM items WHERE kind = 1 AND listed = 1").map { $0[0] }
        let children = try world.sql("SELECT p.path, c.name FROM items c JOIN items p ON c.parent = p.id WHERE p.listed = 1")
        var indexed: [String: Set<String>] = [:]
        for row in children { indexed[row[0], default: []].insert(row[1]) }
        #expect(!listed.isEmpty, "status before the kill: \(status); rows: \((try? world.sql("SELECT kind, listed, count(*) FROM items GROUP BY kind, listed")) ?? [])")
        for folder in listed {
            let onDisk = Set(try FileManager.default.contentsOfDirectory(atPath: folder))
            #expect(indexed[folder, default: []] == onDisk, "\(folder) is marked listed with \(indexed[folder]?.count ?? 0) of \(onDisk.count) children")
        }
        let unlisted = try world.sql("SELECT count(*) FROM items WHERE kind = 1 AND listed = 0")
        #expect(Int(unlisted.first?.first ?? "0") ?? 0 > 0, "nothing was left to resume")
        try world.restart()
        try await world.waitUntilIdle()
        let count = try world.sql("SELECT count(*) FROM items WHERE path >= '\(world.docs.path)/' AND path < '\(world.docs.path)0'")
        #expect(count.first?.first == String(folders + folders * perFolder))
        let found = try world.send(Search(text: "n4.txt", limit: 5000))["items"]?.arrayValue ?? []
        #expect(found.count == folders)
    }

    /// The names' trigram index lives in a file of its own, written after the rows (`NameTrigrams`):
    /// when a kill leaves it behind the rows, or the file is lost, the next start makes it again
    /// from the rows, and name search finds every name once.
    @Test func namesIndexBehindTheRowsIsMadeAgain() async throws {
        let folders = 40, perFolder = 5
        let world = try await IndexWorld("index-names") { dir in
            for folder in 0..<folders {
                for file in 0..<perFolder { try dir.write("docs/f\(folder)/n\(file).txt", "") }
            }
        }
        try await world.waitUntilIdle()
        // Not the start of a name: only the trigram index finds it.
        func found() throws -> Int { (try world.send(Search(text: "4.txt", limit: 5000))["items"]?.arrayValue ?? []).count }
        #expect(try found() == folders)
        let names = FolioPaths.namesDatabase(besideIndex: world.indexDatabase)
        let sequence = try world.sql("SELECT sequence FROM name_trigrams").first?.first
        #expect(try world.sql("SELECT sequence FROM applied", on: names).first?.first == sequence)

        // Killed with the last transactions' names unwritten: the rows say more than the names.
        world.kill()
        _ = try world.sql("INSERT INTO items_fts(items_fts) VALUES ('delete-all'); UPDATE applied SET sequence = 1", on: names)
        try world.restart()
        try await world.waitUntilIdle()
        #expect(try found() == folders)
        #expect(try world.sql("SELECT sequence FROM applied", on: names).first?.first == (try world.sql("SELECT sequence FROM name_trigrams").first?.first))

        // The file lost.
        world.kill()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: names + suffix) }
        try world.restart()
        try await world.waitUntilIdle()
        #expect(try found() == folders)
    }

    /// Names with newlines, invalid UTF-8, paths beyond PATH_MAX, symbolic-link loops and a folder
    /// of 100,000 entries: indexed, or skipped with a logged reason.
    @Test func hostileTreesAreIndexedOrSkipped() async throws {
        let world = try await IndexWorld("index-hostile", arguments: ["--log-level", "notice"]) { dir in
            try HostileTree.build(in: dir.path + "/docs", bigFolderEntries: 100_000)
        }
        // The big folder is written a step's budget at a time, with other work between the
        // steps: it is seen part written (still unlisted), never written in one transaction.
        let big = "SELECT listed, (SELECT count(*) FROM items WHERE parent = big.id) FROM items big WHERE path = '\(world.docs.path)/big'"
        var partial: [String]?
        let deadline = Date().addingTimeInterval(300)
        while partial == nil, Date() < deadline {
            if let row = try world.sql(big).first, row.count == 2, row[0] == "0", let count = Int(row[1]), count > 0, count < 100_000 { partial = row }
            if try world.send(IndexStatus())["state"]?.stringValue != "crawling" { break }
        }
        #expect(partial != nil, "the folder of 100,000 entries was never seen part written")
        try await world.waitUntilIdle(300)
        let inBig = try world.sql("SELECT count(*) FROM items WHERE parent = (SELECT id FROM items WHERE path = '\(world.docs.path)/big')")
        #expect(inBig.first?.first == "100000")
        let newline = try world.send(Search(text: "line\nbreak", limit: 5))["items"]?.arrayValue ?? []
        #expect(newline.count == 1)
        #expect(try world.sql("SELECT count(*) FROM items WHERE name = 'deep.txt'").first?.first == "0", "a path beyond PATH_MAX was indexed")
        #expect(try world.sql("SELECT count(*) FROM items WHERE name LIKE 'bad-%'").first?.first == "0")
        #expect(try world.sql("SELECT kind FROM items WHERE name = 'self'").first?.first == "2", "the loop is a symbolic link, not followed")
        #expect(world.daemon.logs("name is not valid UTF-8") && world.daemon.logs("path longer than PATH_MAX"), "\(world.daemon.log.suffix(2000))")
    }

    /// Run as another user (nobody), the daemon meets folders it may not read: each is skipped with
    /// a logged reason, the rest is indexed, and the crawl finishes.
    @Test func permissionDeniedFoldersAreSkipped() async throws {
        let dir = try TemporaryDirectory("index-nobody")
        let docs = dir.path + "/docs"
        try dir.write("docs/open/visible.txt", "v")
        try dir.write("docs/locked/secret.txt", "s")
        try dir.write("docs/unlistable/hidden.txt", "h")
        let environment = dir.xdgEnvironment()
        for folder in ["home", "data", "config", "state", "run"] { try FileManager.default.createDirectory(atPath: dir.path + "/" + folder, withIntermediateDirectories: true) }
        _ = chmod(dir.path + "/run", 0o700)
        let chown = try ProcessRunner.run(URL(fileURLWithPath: "/bin/chown"), ["-R", "65534:65534", dir.path])
        #expect(chown.status == 0)
        _ = chmod(docs + "/locked", 0o000)
        _ = chmod(docs + "/unlistable", 0o311)
        let daemon = try DaemonProcess(environment: environment, arguments: ["--log-level", "notice"], runAs: 65534)
        defer { daemon.stop() }
        _ = try daemon.waitForListening()
        func folio(_ arguments: [String]) throws -> ProcessRunner.Output {
            try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/setpriv"),
                ["--reuid=65534", "--regid=65534", "--clear-groups", ProcessRunner.folioExecutable().path] + arguments, environment: environment)
        }
        #expect(try folio(["index", "add", docs]).status == 0)
        let status = try folio(["index", "status", "--wait"])
        #expect(status.status == 0 && status.stdout.contains("state: idle"), "\(status)")
        #expect(try folio(["search", "visible"]).stdout == docs + "/open/visible.txt\n")
        #expect(try folio(["search", "secret"]).stdout.isEmpty)
        #expect(try folio(["search", "hidden"]).stdout.isEmpty)
        for folder in ["locked", "unlistable"] {
            #expect(daemon.logs("path=\(docs)/\(folder) reason=folder not readable: Permission denied"), "\(daemon.log.suffix(1500))")
        }
    }

    /// A save by rename (a new file renamed over the document) keeps the document's identity in the
    /// index: its last-used date and favorite rank stay.
    @Test func savesByRenameKeepIdentity() async throws {
        let world = try await IndexWorld("index-identity") { dir in try dir.write("docs/notes.txt", "v1") }
        try await world.waitUntilIdle()
        let path = world.docs.appendingPathComponent("notes.txt").path
        _ = try world.send(RecentsAdd(path: path, event: "modified"))
        let before = try #require(try world.sql("SELECT id, last_used FROM items WHERE path = '\(path)'").first)
        let temporary = try world.dir.write("docs/.notes.txt.tmp", "v2, saved by rename")
        #expect(rename(temporary.path, path) == 0)
        let deadline = Date().addingTimeInterval(10)
        var after: [String] = []
        while Date() < deadline {
            after = try world.sql("SELECT id, last_used, size FROM items WHERE path = '\(path)'").first ?? []
            if after.count == 3, after[2] == "19" { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(after.count == 3 && after[0] == before[0] && after[1] == before[1], "before \(before), after \(after)")
        #expect(try world.sql("SELECT count(*) FROM items WHERE name = '.notes.txt.tmp'").first?.first == "0")
    }
}
