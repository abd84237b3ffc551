import Folio
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Renames and moves travel as moves: the server moves what a device moved (no content is sent,
/// nothing is deleted, a renamed folder is no mass deletion), and the other device moves what the
/// server moved (no content is fetched).
@Suite("Sync of moves", .elasticPool)
struct SyncMoveTests {
    static let kinds = [SyncBackend.Kind.memory, .apache, .moto].filter(\.runs)

    func move(_ device: SyncDevice, _ from: String, _ to: String) throws {
        try FileManager.default.createDirectory(atPath: (device.path(to) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: device.path(from), toPath: device.path(to))
    }

    /// A folder of 100 files renamed on one device arrives renamed on the other, on every server:
    /// one move on the server, none of its files sent again or fetched again.
    @Test(arguments: SyncBackend.Kind.allCases.filter(\.runs))
    func aRenamedFolderOfAHundredFilesArrivesRenamed(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two")
        for index in 0..<100 { try one.write("Album/photo \(index).txt", "photo \(index)") }
        try await one.settle()
        let pulled = try await two.settle()
        #expect(pulled.downloaded == 100, "\(pulled)")
        try move(one, "Album", "Holiday 2026")
        let moved = try await one.sync()
        #expect(moved.moved == 1 && moved.uploaded == 0 && moved.deletedOnServer == 0 && moved.deferred.isEmpty, "\(kind): \(moved)")
        #expect(try await one.sync() == SyncReport(), "\(kind): settled")
        let arrived = try await two.settle()
        #expect(arrived.downloaded == 0 && arrived.deletedHere == 0, "\(kind): moved, not fetched again: \(arrived)")
        #expect(two.tree() == one.tree() && two.tree().count == 100, "\(kind)")
        #expect(two.tree()["Holiday 2026/photo 42.txt"] == "photo 42" && !FileManager.default.fileExists(atPath: two.path("Album")))
    }

    /// A server that refuses to move anything (Apache behind a proxy answering 403 to every MOVE)
    /// or to copy objects (moto behind one answering 501 to every copy): the rename is refused
    /// twice, then done item by item (each file sent again, as nothing can move), and arrives
    /// renamed on the other device; nothing is left at the old name, nothing is deferred, and the
    /// files sent are not fetched back.
    @Test(arguments: [SyncBackend.Kind.apache, .moto].filter(\.runs))
    func aRefusedFolderMoveIsDoneItemByItem(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        for index in 0..<20 { try one.write("Album/photo \(index).txt", "photo \(index)") }
        try one.write("Album/Inner/deep.txt", "deep")
        try await one.settle()
        try await two.settle()
        switch kind {
        case .moto:
            proxy.add(.init(method: "PUT", header: "x-amz-copy-source", action: .reply(501, "<Error><Code>NotImplemented</Code><Message>copies are not supported</Message></Error>")))
        default:
            proxy.add(.init(method: "MOVE", action: .reply(403, "<html><body>moving is forbidden here</body></html>")))
        }
        try move(one, "Album", "Holiday")
        let moved = try await one.sync()
        #expect(moved.moved == 1 && moved.deferred.isEmpty && moved.deletedOnServer == 0, "\(kind): \(moved)")
        let settled = try await one.settle()
        #expect(settled.deferred.isEmpty && settled.uploaded == 0 && settled.downloaded == 0, "\(kind): nothing sent or fetched again: \(settled)")
        // The other device: moto's copies keep their MD5, so it sees moves; Apache's files sent
        // again have new ETags, so it sees the old ones go (a mass deletion, held until confirmed)
        // and new ones arrive.
        let pulled = try await two.settle()
        if kind == .apache {
            #expect(pulled.heldDeletions > 0, "\(pulled)")
            try await two.settle(confirmingDeletions: true)
        } else {
            #expect(pulled.heldDeletions == 0 && pulled.downloaded == 0, "\(pulled)")
        }
        #expect(two.tree() == one.tree() && two.tree().count == 21, "\(kind): \(two.tree().keys.sorted())")
        #expect(two.read("Holiday/Inner/deep.txt") == "deep" && !FileManager.default.fileExists(atPath: two.path("Album")), "\(kind)")
        // The refusals were met: the server was asked to move (or copy) and refused.
        #expect(proxy.requests.contains { kind == .moto ? $0.hasPrefix("PUT ") : $0.hasPrefix("MOVE ") }, "\(kind)")
    }

    /// An item-by-item folder move cut short (the server busy in the middle of it) is finished by
    /// the next pass: the new folder already there is the half-done move, and nothing is lost.
    @Test(.enabled(if: SyncBackend.Kind.apache.runs))
    func aFolderMoveLeftHalfDoneIsFinished() async throws {
        let backend = try SyncBackend(.apache, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        for index in 0..<10 { try one.write("Album/photo\(index).txt", "photo \(index)") }
        try await one.settle()
        try await two.settle()
        proxy.add(.init(method: "MOVE", pathSuffix: "/", action: .reply(403, "moving collections is forbidden here")))
        proxy.add(.init(method: "MOVE", pathContains: "photo7.txt", action: .status(503), times: 1))
        let before = proxy.requests.count
        try move(one, "Album", "Holiday")
        let cut = try await one.sync()
        #expect(!cut.deferred.isEmpty, "the busy server cut the move short: \(cut)")
        // The next pass finds the new folder with the files already moved (equal: converged), moves
        // the rest, and deletes the old folder, empty now; nothing is sent or fetched.
        let finished = try await one.settle()
        #expect(finished.deferred.isEmpty && finished.uploaded == 0 && finished.downloaded == 0, "\(finished)")
        #expect(finished.moved + finished.converged == 10 && finished.deletedOnServer == 1, "the old folder, empty, is what goes: \(finished)")
        #expect(!proxy.requests.dropFirst(before).contains { $0.hasPrefix("PUT ") && $0.contains("photo") }, "a file was sent again")
        try await two.settle()
        #expect(two.tree() == one.tree() && two.tree().count == 10, "\(two.tree().keys.sorted())")
        #expect(!FileManager.default.fileExists(atPath: two.path("Album")) && two.read("Holiday/photo7.txt") == "photo 7")
    }

    /// Apache's ETag is the size and the date: a renamed file and a file of a moved folder written
    /// in the same clock tick share it. The folder's file pairs by its name, and the rename is the
    /// one left on each side: both are moves (this was a rare failure of the test below).
    @Test func aRenameBesideFilesOfTheSameVersionIsAMove() {
        let tag = Data("same-size-same-tick".utf8)
        func base(_ id: String) -> BaseEntry { BaseEntry(isFolder: false, identifier: id, version: tag, hash: nil, fingerprint: nil) }
        func remote(_ id: String) -> RemoteEntry { RemoteEntry(identifier: id, isFolder: false, version: tag, size: 12) }
        let (a, b, old, new) = (SyncPath("a.txt"), SyncPath("b.txt"), SyncPath("Docs/part5.txt"), SyncPath("Papers/part5.txt"))
        let actions: [SyncAction] = [.deleteLocal(a, base("a")), .deleteLocal(old, base("p")), .download(b, remote("b")), .download(new, remote("n"))]
        let local = [a: LocalEntry(isFolder: false), old: LocalEntry(isFolder: false)]
        let paired = SyncMoves.pair(actions, local: local, remote: [b: remote("b"), new: remote("n")], base: [a: base("a"), old: base("p")])
        #expect(paired.contains(.moveLocal(from: a, to: b, remote("b"))), "\(paired)")
        #expect(paired.contains(.moveLocal(from: old, to: new, remote("n"))), "\(paired)")
        #expect(paired.count == 2, "\(paired)")
    }

    @Test(arguments: kinds)
    func movesAreMovedOnBothSides(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two")
        for index in 0..<10 { try one.write("Docs/part\(index).txt", "part \(index) " + String(repeating: "x", count: index)) }
        try one.write("Docs/Deep/inner.txt", "inner")
        try one.write("a.txt", "the letter a")
        try one.write("keep.txt", "stays")
        try await one.settle()
        try await two.settle()
        // A renamed folder (one file deleted in it, one new), a renamed file, a file moved into a new folder.
        try move(one, "Docs", "Papers")
        try one.delete("Papers/part9.txt")
        try one.write("Papers/new.txt", "new in the renamed folder")
        try move(one, "a.txt", "b.txt")
        try move(one, "keep.txt", "Later/keep.txt")
        let moved = try await one.sync()
        #expect(moved.moved == 3 && moved.uploaded == 1 && moved.heldDeletions == 0 && moved.deletedOnServer == 0, "\(moved)")
        let after = try await one.sync()
        #expect(after.deletedOnServer == 1 && after.uploaded == 0, "the deletion inside the moved folder: \(after)")
        let settled = try await one.sync()
        #expect(settled == SyncReport(), "\(settled)")

        // The other device moves rather than fetching again.
        let pulled = try await two.settle()
        #expect(pulled.downloaded == 1 && pulled.moved == 3, "\(pulled)")
        // What the server deleted inside the moved folder moved along with it, and goes next.
        let followed = try await two.sync()
        #expect(followed.deletedHere == 1 && followed.downloaded == 0, "\(followed)")
        #expect(two.tree() == one.tree(), "\(two.tree().keys.sorted()) \(one.tree().keys.sorted())")
        #expect(two.read("Papers/Deep/inner.txt") == "inner" && two.read("b.txt") == "the letter a")
        #expect(try await two.sync() == SyncReport())
        #expect(try await one.sync() == SyncReport())
    }

    /// A renamed placeholder stub is a renamed file: moved on the server, never deleted.
    @Test(arguments: kinds)
    func aRenamedPlaceholderIsMoved(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        try one.write("draft.txt", "the draft, only on the server for device two")
        try await one.settle()
        try await two.settle()
        try FileManager.default.moveItem(atPath: two.path("draft.txt.folio-cloud"), toPath: two.path("final.txt.folio-cloud"))
        let renamed = try await two.sync()
        #expect(renamed.moved == 1 && renamed.deletedOnServer == 0, "\(renamed)")
        let pulled = try await one.settle()
        #expect(one.read("final.txt") == "the draft, only on the server for device two" && one.read("draft.txt") == nil, "\(pulled)")
        // The moved placeholder still downloads.
        let progress = Progress(totalUnitCount: 0)
        #expect(try await two.engine.materialize([SyncPath("final.txt")], progress: progress) == [SyncPath("final.txt")])
        #expect(two.read("final.txt") == "the draft, only on the server for device two")
    }
}

/// Names as users write them: NFC and NFD spellings of one name are two files (Linux keeps both),
/// and spaces, percent signs, `#`, `?`, quotes and emoji survive the round trip byte for byte.
@Suite("Names", .elasticPool)
struct SyncNameTests {
    @Test(arguments: [SyncBackend.Kind.memory, .apache, .wsgidav, .moto].filter(\.runs))
    func oddAndUnicodeNamesRoundTrip(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two")
        let names = [
            "caf\u{E9}.txt", "cafe\u{301}.txt", "two  spaces .txt", "100%25 done%.txt", "hash#and?query.txt", "quote'\"s.txt",
            "party \u{1F389}.txt", "\u{FC}n\u{EF}c\u{F6}d\u{E9}/\u{F1}.txt", ".hidden", "semi;colon&amp.txt", "plus+sign=.txt",
        ]
        for (index, name) in names.enumerated() { try one.write(name, "content \(index)") }
        let sent = try await one.settle()
        #expect(sent.uploaded == names.count && sent.skipped.isEmpty, "\(sent)")
        let pulled = try await two.settle()
        #expect(pulled.downloaded == names.count && pulled.skipped.isEmpty, "\(pulled)")
        // Compared as bytes: Swift's String equality would merge the two café spellings.
        #expect(two.byteTree() == one.byteTree() && two.byteTree().count == names.count)
        #expect(try await one.sync() == SyncReport())
        #expect(try await two.sync() == SyncReport())
    }
}
