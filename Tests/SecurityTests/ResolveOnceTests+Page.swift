import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import Synchronization
import SystemPackage
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The page's race, in `ResolveOnceTests`, whose tests run one at a time: two such races at once
/// on a loaded machine starve each other's daemon.
extension ResolveOnceTests {
    /// Where the app's folder is: its container, or a folder of the user's granted it read-write.
    enum Place: String, CaseIterable, Sendable {
        case container, grantedFolder
    }

    /// The browser page acts on what it checked. While an app swaps a folder of its own — in its
    /// container, or in a folder the user granted it read-write — with a symbolic link to a private
    /// folder of the user's (`renameat2` exchange), the user's page lists, reads, tags, duplicates,
    /// renames, moves, trashes, restores, makes folders, restores versions, resolves conflicts and
    /// opens documents in the app (a copy in its Inbox) in the app's folder. None of it may touch
    /// the private folder or carry anything of it into the app's: a path the page names in a folder an
    /// app may write is resolved beneath that folder, and every change goes through the descriptors
    /// that resolution opened.
    @Test(arguments: Place.allCases) func thePageActsOnWhatItChecked(in place: Place) throws {
        let world = try ProtocolAttackTests.World("attack-page")
        let home = world.dir.path + "/home"
        let container = try world.appFolder(place)
        let documents = container + "/Documents"
        // The user's private folder: in the page's reach (the home folder), never in the app's.
        let privateFolder = home + "/private", destination = home + "/dest"
        try FileManager.default.createDirectory(atPath: privateFolder + "/inner", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        for (name, text) in [("report.txt", "the user's private report"), ("canary.txt", "the user's canary"), ("only-private.txt", "the user's own")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: privateFolder + "/" + name))
        }
        try FileManager.default.createDirectory(atPath: documents + "/x", withIntermediateDirectories: true)
        // The app's folder, reached by this test through a descriptor whatever its name is now.
        let own = open(documents + "/x", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(own >= 0)
        defer { close(own) }
        let ownPath = "/proc/self/fd/\(own)"
        func restock() throws {
            for (name, text) in [("report.txt", "the app's report"), ("canary.txt", "the app's canary")]
            where !FileManager.default.fileExists(atPath: ownPath + "/" + name) {
                try Data(text.utf8).write(to: URL(fileURLWithPath: ownPath + "/" + name))
            }
        }
        try restock()
        // The app's report has versions in the daemon's store (written through the app's folder's
        // descriptor), so the page restores and resolves conflicts of it.
        let store = VersionStore(directory: FolioPaths(environment: world.dir.xdgEnvironment()).versionsDirectory)
        func addVersions() {
            _ = try? store.addVersion(ofItemAt: ownPath + "/report.txt", data: Data("the app's older report".utf8), kind: .saved)
            _ = try? store.addVersion(ofItemAt: ownPath + "/report.txt", data: Data("the app's other report".utf8), kind: .conflict, isConflict: true)
        }
        addVersions()
        #expect(symlink(privateFolder, documents + "/y") == 0)
        let before = Self.snapshot(privateFolder)

        let page = try Page(environment: world.dir.xdgEnvironment())
        let stop = Atomic<Bool>(false)
        let swaps = Atomic<Int>(0)
        // A swap every ten milliseconds: both states last long enough for the page's requests to
        // meet each, and the daemon's index, which hears every swap in the container and lists
        // the folder again, is not kept so busy that the page's answers (which wait for the index)
        // take seconds — at one swap every 2 ms a loaded CI run got 5 rounds in three minutes.
        let swapper = Thread {
            while !stop.load(ordering: .relaxed) {
                if (try? FilePath(documents + "/x").exchange(with: FilePath(documents + "/y"))) != nil { swaps.add(1, ordering: .relaxed) }
                usleep(10_000)
            }
        }
        swapper.start()
        defer { stop.store(true, ordering: .relaxed) }

        var leaks: [String] = []
        var tally: [String: (done: Int, refused: Int)] = [:]
        var slowest: [String: Duration] = [:]
        func ask(_ route: String, get query: String? = nil, post body: [String: Any]? = nil) throws -> LoopbackHTTP.Response {
            let asked = ContinuousClock.now
            let response = try body.map { try page.post(route, $0) } ?? page.get(route + "?" + (query ?? ""))
            slowest[route] = max(slowest[route] ?? .zero, ContinuousClock.now - asked)
            if response.status == 200 { tally[route, default: (0, 0)].done += 1 } else { tally[route, default: (0, 0)].refused += 1 }
            return response
        }
        func text(_ response: LoopbackHTTP.Response) -> String { String(decoding: response.body, as: UTF8.self) }
        func encoded(_ path: String) -> String { path.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-._~"))) ?? path }
        func bothStates() -> Bool { (tally["list"]?.done ?? 0) > 5 && (tally["list"]?.refused ?? 0) > 5 }

        let x = documents + "/x"
        var versionID: String?
        let started = ContinuousClock.now
        var round = 0
        while ContinuousClock.now < started + .seconds(10) || (!bothStates() && ContinuousClock.now < started + .seconds(180)) {
            round += 1
            try restock()
            let listed = try ask("list", get: "path=\(encoded(x))&hidden=1")
            if text(listed).contains("only-private") { leaks.append("list showed the user's folder") }
            let versions = try ask("versions", get: "path=\(encoded(x + "/report.txt"))")
            if text(versions).contains("the user's") { leaks.append("versions showed the user's report") }
            let kept = ((try? JSONSerialization.jsonObject(with: versions.body)) as? [String: Any])?["versions"] as? [[String: Any]]
            if let id = kept?.first?["id"] as? String { versionID = id }
            if let versionID { _ = try ask("versions/restore", post: ["path": x + "/report.txt", "id": versionID]) }
            addVersions()
            _ = try ask("conflicts/resolve", post: ["path": x + "/report.txt", "both": true])
            // Opened in the app itself, which takes documents as copies in its Inbox.
            _ = try ask("open", post: ["path": x + "/report.txt", "app": ProtocolAttackTests.mallory])
            _ = try ask("handlers", get: "path=\(encoded(x + "/report.txt"))")
            _ = try ask("tags", post: ["path": x + "/report.txt", "tags": ["race"]])
            _ = try ask("duplicate", post: ["path": x + "/report.txt"])
            if try ask("rename", post: ["path": x + "/canary.txt", "name": "renamed-\(round).txt"]).status == 200 {
                _ = try? FileManager.default.removeItem(atPath: ownPath + "/renamed-\(round).txt")
            }
            _ = try ask("folder", post: ["parent": x, "name": "made-\(round)"])
            let moved = try ask("move", post: ["paths": [x + "/report.txt"], "to": destination])
            if moved.status == 200, let carried = try? String(contentsOfFile: destination + "/report.txt", encoding: .utf8) {
                if carried.contains("the user's") { leaks.append("move carried out the user's report") }
                try? FileManager.default.removeItem(atPath: destination + "/report.txt")
            }
            let trashed = try ask("trash", post: ["paths": [x + "/canary.txt"]])
            if trashed.status == 200, let names = (try? JSONSerialization.jsonObject(with: trashed.body) as? [String: Any])?["names"] as? [String] {
                for name in names { _ = try ask("restore", post: ["name": name]) }
            }
        }
        stop.store(true, ordering: .relaxed)
        while !swapper.isFinished { usleep(1000) }

        if Self.snapshot(privateFolder) != before { leaks.append("the user's private folder changed") }
        let inbox = try world.container()
        for (path, contents) in Self.snapshot(container).merging(Self.snapshot(destination), uniquingKeysWith: { $1 }).merging(Self.snapshot(inbox), uniquingKeysWith: { $1 })
        where String(decoding: contents, as: UTF8.self).contains("the user's") {
            leaks.append("\(path) holds the user's words")
        }
        #expect(swaps.load(ordering: .relaxed) > 100, "the swap did not run")
        #expect(bothStates(), "\(tally): the race did not hit both states")
        for route in tally.keys.sorted() { print("page \(route): \(tally[route]!.done) done, \(tally[route]!.refused) refused, slowest \(slowest[route]!)") }
        #expect(leaks.isEmpty, "\(leaks.count) leaks in \(round) rounds: \(Array(Set(leaks)).sorted().prefix(8))")
    }

    /// Every file below `root` (links not followed) with its contents and `user.` attributes.
    static func snapshot(_ root: String) -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let name = enumerator?.nextObject() as? String {
            let path = root + "/" + name
            guard let status = try? FileStatus(path: FilePath(path)), status.kind != .symbolicLink else { continue }
            var record = status.kind == .regular ? FileManager.default.contents(atPath: path) ?? Data() : Data("folder".utf8)
            for attribute in ((try? FilePath(path).extendedAttributeNames()) ?? []).sorted() where attribute.hasPrefix("user.") {
                record += Data(attribute.utf8) + Data(((try? FilePath(path).extendedAttribute(named: attribute)) ?? nil) ?? [])
            }
            files[path] = record
        }
        return files
    }

    /// The daemon's page, as the user's browser reaches it: its address and token from
    /// `web.json`, the token as the cookie, and a change sent as the page sends it.
    struct Page {
        let port: Int
        let cookie: String

        init(environment: [String: String]) throws {
            let file = environment["XDG_RUNTIME_DIR"]! + "/folio/web.json"
            var description: [String: Any]?
            let deadline = ContinuousClock.now + .seconds(20)
            while description == nil {
                if let data = FileManager.default.contents(atPath: file) { description = try JSONSerialization.jsonObject(with: data) as? [String: Any] }
                guard description != nil || ContinuousClock.now < deadline else { throw TestFailure("no web.json after 20 s") }
                if description == nil { usleep(20_000) }
            }
            port = description?["port"] as? Int ?? 0
            cookie = "folio-\(port)=\(description?["token"] as? String ?? "")"
        }

        func get(_ route: String) throws -> LoopbackHTTP.Response {
            try LoopbackHTTP.request(port: port, method: "GET", path: "/api/" + route, headers: ["Cookie": cookie])
        }

        func post(_ route: String, _ body: [String: Any]) throws -> LoopbackHTTP.Response {
            let headers = ["Cookie": cookie, "Origin": "http://127.0.0.1:\(port)", "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"]
            return try LoopbackHTTP.request(port: port, method: "POST", path: "/api/" + route, headers: headers, body: try JSONSerialization.data(withJSONObject: body))
        }
    }
}

extension ProtocolAttackTests.World {
    /// A folder of the app's own: its container, or `~/shared`, granted it read-write by the user.
    func appFolder(_ place: ResolveOnceTests.Place) throws -> String {
        switch place {
        case .container:
            return try container()
        case .grantedFolder:
            let folder = dir.path + "/home/shared"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let granted = try call(user, "grant.add", ["app": .string(ProtocolAttackTests.mallory), "path": .string(folder), "write": true])
            guard granted["result"] != nil else { throw TestFailure("grant.add: \(granted)") }
            return folder
        }
    }
}
