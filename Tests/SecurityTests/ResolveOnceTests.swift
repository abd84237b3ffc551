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

/// A path is resolved once: what a request checks is what it acts on. An app swaps a folder of its
/// container with a symbolic link to the user's private folder (`renameat2` exchange) while it
/// sends every request that names a path; none ever answers about or touches a file outside the
/// app's reach.
@Suite("Attacks: a path swapped while it is checked", .serialized, .elasticPool)
struct ResolveOnceTests {
    typealias World = ProtocolAttackTests.World

    @Test func aFolderSwappedForALinkLeadsNowhere() throws {
        let world = try World("attack-exchange")
        // Every answer is awaited (a loaded machine is slow, not wrong).
        world.app.readTimeout = .seconds(60)
        world.user.readTimeout = .seconds(60)
        let container = try world.container()
        let documents = container + "/Documents"
        // The user's private folder: a PDF (known by its bytes: the name has no extension) and a
        // text, at the names the app's own folder has too.
        let privateFolder = world.dir.path + "/private"
        let pdf = "%PDF-1.4\n%\u{e2}\u{e3}\u{cf}\u{d3}\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
        try world.dir.write("private/report", pdf)
        try world.dir.write("private/canary.txt", "the user's canary")
        try FileManager.default.createDirectory(atPath: documents + "/x", withIntermediateDirectories: true)
        try Data("the app's own words".utf8).write(to: URL(fileURLWithPath: documents + "/x/report"))
        try Data("the app's canary".utf8).write(to: URL(fileURLWithPath: documents + "/x/canary.txt"))
        #expect(symlink(privateFolder, documents + "/y") == 0)
        let before = (try? FilePath(privateFolder + "/report").extendedAttribute(named: "user.folio.id")) ?? nil

        let stop = Atomic<Bool>(false)
        let swaps = Atomic<Int>(0)
        let swapper = Thread {
            while !stop.load(ordering: .relaxed) {
                if (try? FilePath(documents + "/x").exchange(with: FilePath(documents + "/y"))) != nil { swaps.add(1, ordering: .relaxed) }
            }
        }
        swapper.start()
        defer { stop.store(true, ordering: .relaxed) }

        let report = documents + "/x/report", canary = documents + "/x/canary.txt"
        var leaks: [String] = []
        var answered = 0, refused = 0
        func outside(_ path: String?) -> Bool { path.map { !$0.hasPrefix(container + "/") } ?? false }
        // At least 10 s, and until both states were hit often (a loaded machine runs fewer rounds
        // in 10 s: CI once ran four), within three minutes.
        let started = ContinuousClock.now
        var round = 0
        while ContinuousClock.now < started + .seconds(10) || ((answered <= 10 || refused <= 10) && ContinuousClock.now < started + .seconds(180)) {
            round += 1
            let requests: [(String, WireValue)] = [
                ("types.of", ["path": .string(report)]),
                ("bookmark.create", ["path": .string(canary)]),
                ("item", ["path": .string(canary)]),
                ("recents.add", ["path": .string(canary), "event": "opened"]),
                ("claim", ["purpose": "race", "items": [["path": .string(canary), "access": "read", "options": 0]]]),
                ("query.start", ["query": .int(Int64(round)), "predicate": "kMDItemFSName == 'canary.txt'", "scopes": [.string(documents + "/x")]]),
                ("search", ["text": "canary", "folders": [.string(documents + "/x")]]),
            ]
            for (method, params) in requests {
                let reply = try world.call(world.app, method, params)
                guard let result = reply["result"] else {
                    refused += 1
                    continue
                }
                answered += 1
                switch method {
                case "types.of":
                    if result["identifier"]?.stringValue == "com.adobe.pdf" { leaks.append("types.of sniffed the user's PDF") }
                case "bookmark.create":
                    if let data = result["data"]?.stringValue {
                        let resolved = try world.call(world.user, "bookmark.resolve", ["data": .string(data)])
                        if outside(resolved["result"]?["path"]?.stringValue) { leaks.append("a bookmark of \(resolved)") }
                    }
                case "item":
                    if outside(result["item"]?["path"]?.stringValue) { leaks.append("item answered \(result)") }
                case "claim":
                    world.notify(world.app, "release", ["claim": reply["id"] ?? .null])
                case "query.start":
                    world.notify(world.app, "query.stop", ["query": .int(Int64(round))])
                case "search":
                    for hit in result["items"]?.arrayValue ?? [] where outside(hit["path"]?.stringValue) { leaks.append("search found \(hit)") }
                default: break
                }
            }
        }
        stop.store(true, ordering: .relaxed)
        // Query results come as events: none may name the user's files.
        for event in try world.eventsSoFar(world.app) where event.serialized().contains(Array(privateFolder.utf8)) {
            leaks.append("an event named the user's folder: \(String(decoding: event.serialized().prefix(300), as: UTF8.self))")
        }
        let recents = try world.call(world.user, "recents", ["limit": 500])["result"]?["items"]?.arrayValue ?? []
        for recent in recents where recent["path"]?.stringValue?.hasPrefix(privateFolder) == true { leaks.append("recents gained \(recent)") }
        let after = (try? FilePath(privateFolder + "/report").extendedAttribute(named: "user.folio.id")) ?? nil
        let canaryMark = (try? FilePath(privateFolder + "/canary.txt").extendedAttribute(named: "user.folio.id")) ?? nil
        if after != before || canaryMark != nil { leaks.append("a user file was given an identity") }
        #expect(swaps.load(ordering: .relaxed) > 100, "the swap did not run")
        #expect(answered > 10 && refused > 10, "answered \(answered), refused \(refused): the race did not hit both states")
        #expect(leaks.isEmpty, "\(leaks.count) leaks in \(round) rounds: \(Set(leaks.map { String($0.prefix(200)) }).prefix(8))")
    }
}
