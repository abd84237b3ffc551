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
/// app's reach. Not here: `picker.pick` (its folder only opens the user's picker there; the app gets
/// what the user chooses) and the drive's requests (this daemon has no drive; `drive.evict` and
/// `drive.publish` go through the same `AccessService.resolve`).
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

        // Presenters are registered on a file of their own, so the app's claims do not wait on them.
        try world.dir.write("private/presented.txt", "the user's presented file")
        try Data("the app's presented file".utf8).write(to: URL(fileURLWithPath: documents + "/x/presented.txt"))
        let report = documents + "/x/report", canary = documents + "/x/canary.txt", presented = documents + "/x/presented.txt"
        // The user's own tool presents the private canary: whatever reaches it from the app is a leak.
        #expect(try world.call(world.user, "presenter.add", ["presenter": 1, "purpose": "user", "path": .string(privateFolder + "/canary.txt")])["result"] != nil)
        // A bookmark the app made of its own canary before the race.
        let ownBookmark = try #require(try world.call(world.app, "bookmark.create", ["path": .string(canary)])["result"]?["data"])

        let stop = Atomic<Bool>(false)
        let swaps = Atomic<Int>(0)
        let swapper = Thread {
            while !stop.load(ordering: .relaxed) {
                if (try? FilePath(documents + "/x").exchange(with: FilePath(documents + "/y"))) != nil { swaps.add(1, ordering: .relaxed) }
            }
        }
        swapper.start()
        defer { stop.store(true, ordering: .relaxed) }


        var leaks: [String] = []
        var appEvents: [WireValue] = []
        var tally: [String: (answered: Int, refused: Int)] = [:]
        func outside(_ path: String?) -> Bool { path.map { !$0.hasPrefix(container + "/") } ?? false }
        // A request whose reply is awaited; the app's events that come first are kept.
        func ask(_ method: String, _ params: WireValue) throws -> WireValue {
            let reply = try world.call(world.app, method, params, event: { appEvents.append($0) })
            if reply["result"] != nil { tally[method, default: (0, 0)].answered += 1 } else { tally[method, default: (0, 0)].refused += 1 }
            return reply
        }
        // At least 10 s, and until both states were hit often (a loaded machine runs fewer rounds
        // in 10 s: CI once ran four), within three minutes.
        let started = ContinuousClock.now
        var round = 0
        func bothStates() -> Bool { (tally["types.of"]?.answered ?? 0) > 10 && (tally["types.of"]?.refused ?? 0) > 10 }
        while ContinuousClock.now < started + .seconds(10) || (!bothStates() && ContinuousClock.now < started + .seconds(180)) {
            round += 1
            if let result = try ask("types.of", ["path": .string(report)])["result"], result["identifier"]?.stringValue == "com.adobe.pdf" {
                leaks.append("types.of sniffed the user's PDF")
            }
            if let data = try ask("bookmark.create", ["path": .string(canary)])["result"]?["data"]?.stringValue {
                let resolved = try world.call(world.user, "bookmark.resolve", ["data": .string(data)])
                if outside(resolved["result"]?["path"]?.stringValue) { leaks.append("a bookmark of \(resolved)") }
            }
            if let result = try ask("item", ["path": .string(canary)])["result"], outside(result["item"]?["path"]?.stringValue) {
                leaks.append("item answered \(result)")
            }
            _ = try ask("recents.add", ["path": .string(canary), "event": "opened"])
            let read = try ask("claim", ["purpose": "race", "items": [["path": .string(canary), "access": "read", "options": 0]]])
            if read["result"] != nil { world.notify(world.app, "release", ["claim": read["id"] ?? .null]) }
            // A write, and the move it announces: where it went must be the app's to write.
            let write = try ask("claim", ["purpose": "race", "items": [["path": .string(canary), "access": "write", "options": 0]]])
            if write["result"] != nil {
                _ = try ask("moved", ["claim": write["id"] ?? .null, "from": .string(canary), "to": .string(documents + "/x/moved.txt")])
                world.notify(world.app, "release", ["claim": write["id"] ?? .null])
            }
            if try ask("query.start", ["query": .int(Int64(round)), "predicate": "kMDItemFSName == 'canary.txt'", "scopes": [.string(documents + "/x")]])["result"]
                != nil
            {
                world.notify(world.app, "query.stop", ["query": .int(Int64(round))])
            }
            for hit in try ask("search", ["text": "canary", "folders": [.string(documents + "/x")]])["result"]?["items"]?.arrayValue ?? []
            where outside(hit["path"]?.stringValue) {
                leaks.append("search found \(hit)")
            }
            let checked = try ask("access.check", ["path": .string(canary)])
            if checked.serialized().contains(Array(privateFolder.utf8)) { leaks.append("access.check named the user's folder: \(checked)") }
            // Presenters stay registered: the user's writes below must reach none of them.
            _ = try ask("presenter.add", ["presenter": .int(Int64(2 * round)), "purpose": "race", "path": .string(presented)])
            _ = try ask("presenter.add", ["presenter": .int(Int64(2 * round + 1)), "purpose": "race"])
            _ = try ask("presenter.update", ["presenter": .int(Int64(2 * round + 1)), "path": .string(report)])
            _ = try ask("ubiquity.changed", ["path": .string(canary), "keys": ["NSURLUbiquitousItemIsUploadedKey"]])
            if let result = try ask("bookmark.resolve", ["data": ownBookmark])["result"], outside(result["path"]?.stringValue) {
                leaks.append("the app's bookmark resolved to \(result)")
            }
            _ = try ask("bookmark.values", ["data": ownBookmark])
        }
        stop.store(true, ordering: .relaxed)
        // The user writes their private files under coordination: no presenter of the app hears it.
        for (id, file) in [(90_001, "presented.txt"), (90_002, "report")] {
            let path = privateFolder + "/" + file
            world.user.send(#"{"id":\#(id),"method":"claim","params":{"purpose":"user","items":[{"path":"\#(path)","access":"write","options":0}]}}"# + "\n")
            var granted = false
            while let line = world.user.line() {
                if line.contains(#""id":\#(id),"#) { granted = line.contains("result"); break }
            }
            #expect(granted)
            world.notify(world.user, "release", ["claim": .int(Int64(id))])
        }
        // Neither the app's events (query results, presenter messages) nor the user's presenter's
        // may show the app reaching the user's files.
        appEvents += try world.eventsSoFar(world.app)
        for event in appEvents where event.serialized().contains(Array(privateFolder.utf8)) {
            leaks.append("an event to the app named the user's folder: \(String(decoding: event.serialized().prefix(300), as: UTF8.self))")
        }
        for event in try world.eventsSoFar(world.user) {
            leaks.append("the user's presenter heard the app: \(String(decoding: event.serialized().prefix(300), as: UTF8.self))")
        }
        let presenters = try world.call(world.user, "status", [:])["result"]?["presenters"]?.arrayValue ?? []
        for presenter in presenters where presenter["purpose"]?.stringValue == "race" && outside(presenter["path"]?.stringValue) {
            leaks.append("an app's presenter is at \(presenter)")
        }
        let recents = try world.call(world.user, "recents", ["limit": 500])["result"]?["items"]?.arrayValue ?? []
        for recent in recents where recent["path"]?.stringValue?.hasPrefix(privateFolder) == true { leaks.append("recents gained \(recent)") }
        let after = (try? FilePath(privateFolder + "/report").extendedAttribute(named: "user.folio.id")) ?? nil
        let canaryMark = (try? FilePath(privateFolder + "/canary.txt").extendedAttribute(named: "user.folio.id")) ?? nil
        if after != before || canaryMark != nil { leaks.append("a user file was given an identity") }
        #expect(swaps.load(ordering: .relaxed) > 100, "the swap did not run")
        #expect(bothStates(), "\(tally): the race did not hit both states")
        for method in tally.keys.sorted() { print("\(method): \(tally[method]!.answered) answered, \(tally[method]!.refused) refused") }
        #expect(leaks.isEmpty, "\(leaks.count) leaks in \(round) rounds: \(Set(leaks.map { String($0.prefix(200)) }).prefix(8))")
    }

    /// The picker acts on what it checked: while a folder of the app's — in its container, or in a
    /// folder the user granted it read-write — is swapped with a link to the user's private folder,
    /// the app exports and moves its documents from that folder and the user's picker chooses a
    /// folder of the user's; and the user chooses, to open and to import, a document the picker
    /// showed in that folder. No export or move ever carries a user file out, and no open or import
    /// ever hands the app a user file or a grant to one.
    @Test(arguments: Place.allCases) func thePickerActsOnWhatItChecked(in place: Place) throws {
        let world = try World("attack-picker")
        world.app.readTimeout = .seconds(60)
        world.user.readTimeout = .seconds(60)
        let container = try world.appFolder(place)
        let documents = container + "/Documents"
        let privateFolder = world.dir.path + "/private", destination = world.dir.path + "/dest"
        try world.dir.write("private/report.txt", "the user's private report")
        try world.dir.write("private/canary.txt", "the user's canary")
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: documents + "/x", withIntermediateDirectories: true)
        // The app's folder, reached by this test through a descriptor whatever its name is now.
        let own = open(documents + "/x", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(own >= 0)
        defer { close(own) }
        let ownPath = "/proc/self/fd/\(own)"
        try Data("the app's report".utf8).write(to: URL(fileURLWithPath: ownPath + "/report.txt"))
        try Data("the app's canary".utf8).write(to: URL(fileURLWithPath: ownPath + "/canary.txt"))
        #expect(symlink(privateFolder, documents + "/y") == 0)
        #expect(try world.call(world.user, "picker.attach", [:])["result"] != nil)

        let stop = Atomic<Bool>(false)
        let swapper = Thread {
            while !stop.load(ordering: .relaxed) { _ = try? FilePath(documents + "/x").exchange(with: FilePath(documents + "/y")) }
        }
        swapper.start()
        defer { stop.store(true, ordering: .relaxed) }

        var leaks: [String] = []
        var tally: [String: (done: Int, refused: Int)] = [:]
        var nextID: Int64 = 1_000
        /// One picker round: the app asks, the user's picker chooses `chosen`; the app's answer.
        func round(_ mode: String, urls: [String], chosen: String) throws -> WireValue? {
            nextID += 1
            let id = nextID
            var members: [String: WireValue] = ["mode": .string(mode)]
            if !urls.isEmpty { members["urls"] = .array(urls.map { .string($0) }) }
            let params = WireValue.object(members)
            world.app.send(String(decoding: WireValue.object(["id": .int(id), "method": "picker.pick", "params": params]).serialized(), as: UTF8.self) + "\n")
            var number: WireValue?
            while number == nil, let line = world.user.line() {
                let frame = try WireValue(parsing: Array(line.utf8))
                if frame["event"]?.stringValue == "picker" { number = frame["request"] }
            }
            let request = try #require(number)
            let choice = try world.call(world.user, "picker.choose", ["request": request, "paths": [.string(chosen)]])
            if choice["result"] == nil { _ = try world.call(world.user, "picker.choose", ["request": request, "cancel": true]) }
            while let line = world.app.line() {
                let frame = try WireValue(parsing: Array(line.utf8))
                guard frame["id"]?.intValue == id else { continue }
                let answered = frame["result"] != nil
                tally[mode, default: (0, 0)].done += answered ? 1 : 0
                tally[mode, default: (0, 0)].refused += answered ? 0 : 1
                return frame["result"]?["urls"]?.arrayValue?.first
            }
            throw TestFailure("no answer to picker.pick")
        }
        func text(_ path: String?) -> String { path.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }
        func bothStates() -> Bool { ["export", "open"].allSatisfy { (tally[$0]?.done ?? 0) > 5 && (tally[$0]?.refused ?? 0) > 5 } }

        let started = ContinuousClock.now
        while ContinuousClock.now < started + .seconds(10) || (!bothStates() && ContinuousClock.now < started + .seconds(180)) {
            if let url = try round("export", urls: [documents + "/x/report.txt"], chosen: destination), let path = url["path"]?.stringValue {
                if text(path).contains("private") { leaks.append("export carried out the user's report") }
                try? FileManager.default.removeItem(atPath: path)
            }
            if let url = try round("move", urls: [documents + "/x/canary.txt"], chosen: destination), let path = url["path"]?.stringValue {
                if text(path).contains("user's") { leaks.append("move carried out the user's canary") }
                try? FileManager.default.removeItem(atPath: path)
            }
            if !FileManager.default.fileExists(atPath: ownPath + "/canary.txt") {
                try Data("the app's canary".utf8).write(to: URL(fileURLWithPath: ownPath + "/canary.txt"))
            }
            // (What an opened path holds cannot be read back here: the swap goes on. The grants are
            // checked at the end.)
            if let url = try round("open", urls: [], chosen: documents + "/x/report.txt"), let path = url["path"]?.stringValue,
                !path.hasPrefix(container + "/")
            {
                leaks.append("open handed the app \(url)")
            }
            if let url = try round("import", urls: [], chosen: documents + "/x/report.txt"), text(url["path"]?.stringValue).contains("private") {
                leaks.append("import handed the app a copy of the user's report")
            }
        }
        stop.store(true, ordering: .relaxed)
        if text(privateFolder + "/canary.txt") != "the user's canary" { leaks.append("the user's canary was moved or changed") }
        for grant in try world.call(world.user, "grant.list", ["app": .string(ProtocolAttackTests.mallory)])["result"]?["grants"]?.arrayValue ?? []
        where grant["path"]?.stringValue?.contains("/private/") == true {
            leaks.append("the app holds a grant to \(grant)")
        }
        print("picker race: \(tally)")
        #expect(bothStates(), "\(tally): the race did not hit both states")
        #expect(leaks.isEmpty, "\(leaks.count) leaks: \(Set(leaks).prefix(8))")
    }
}
