import Crypto
import Folio
@testable import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("Whole listings taken and compared", .elasticPool)
struct ListingSnapshotTests {
    static func file(_ path: String, _ version: String) -> FileProviderItemRecord {
        FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier(path), parentItemIdentifier: .rootContainer, filename: path, contentType: .data,
            itemVersion: FileProviderItemVersion(contentVersion: Data(version.utf8), metadataVersion: Data(version.utf8)), size: 1)
    }

    static func items(_ records: [FileProviderItemRecord]) -> [FileProviderItemIdentifier: FileProviderItemRecord] {
        Dictionary(uniqueKeysWithValues: records.map { ($0.itemIdentifier, $0) })
    }

    /// A walk that repeats the one whose items the snapshot holds is not compared again (a stand-in
    /// with other items, which only a skip leaves out, shows it); once the provider has recorded a
    /// change of its own, or the walk repeats another one, it is compared as any other.
    @Test func aRepeatedWalkIsTakenWithoutComparingUnlessTouchedSince() throws {
        let first = Self.items([Self.file("a", "1"), Self.file("b", "1")])
        var snapshot = ListingSnapshot()
        snapshot.update(with: ListingWalk(items: first, number: 1))
        let anchor = snapshot.changes.anchor
        snapshot.update(with: ListingWalk(items: Self.items([Self.file("a", "2")]), number: 2, repeats: 1))
        #expect(snapshot.items == first)
        #expect(snapshot.sortedByIdentifier().map(\.itemIdentifier.rawValue) == ["a", "b"])
        #expect(try snapshot.changes.changes(since: anchor, limit: 10).updated.isEmpty)

        // A walk repeating one the snapshot does not hold is compared.
        snapshot.update(with: ListingWalk(items: Self.items([Self.file("a", "2")]), number: 3, repeats: 1))
        #expect(snapshot.items?.keys.map(\.rawValue).sorted() == ["a"])
        #expect(snapshot.items?[FileProviderItemIdentifier("a")]?.itemVersion.contentVersion == Data("2".utf8))

        // The provider's own change, recorded after walk 3: walk 4, repeating 3, is compared.
        snapshot.remember(Self.file("c", "1"))
        #expect(snapshot.sortedByIdentifier().map(\.itemIdentifier.rawValue) == ["a", "c"])
        snapshot.update(with: ListingWalk(items: Self.items([Self.file("a", "2")]), number: 4, repeats: 3))
        #expect(snapshot.items?.keys.map(\.rawValue).sorted() == ["a"])
        #expect(snapshot.sortedByIdentifier().map(\.itemIdentifier.rawValue) == ["a"])
    }

    /// Against Apache: a second walk with nothing changed repeats the first; a file changed behind
    /// the provider's back, or a folder added, makes the next walk one of its own.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aWalkRepeatsTheLastOnlyWhenEveryFolderAnsweredTheSame() async throws {
        let server = try TestServer(.apache)
        let root = server.root!
        let hourAgo = Date(timeIntervalSinceNow: -3600)
        for folder in ["a", "b"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            try Data(folder.utf8).write(to: root.appendingPathComponent(folder + "/1.txt"))
            // Dated an hour back: Apache lists a tag as weak within a second of a change.
            for path in [folder + "/1.txt", folder] {
                try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: root.appendingPathComponent(path).path)
            }
        }
        try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: root.path)
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let first = try await provider.walk()
        #expect(first.repeats == nil)
        #expect(first.items.keys.map(\.rawValue).sorted() == ["a", "a/1.txt", "b", "b/1.txt"])
        let second = try await provider.walk()
        #expect(second.repeats == first.number)
        #expect(second.items == first.items)

        try Data("changed".utf8).write(to: root.appendingPathComponent("b/1.txt"))
        let third = try await provider.walk()
        #expect(third.repeats == nil)
        #expect(third.items[FileProviderItemIdentifier("b/1.txt")]?.documentSize?.int64Value == 7)

        try FileManager.default.createDirectory(at: root.appendingPathComponent("a/inner"), withIntermediateDirectories: true)
        let fourth = try await provider.walk()
        #expect(fourth.repeats == nil)
        #expect(fourth.items[FileProviderItemIdentifier("a/inner")]?.isFolder == true)
    }

    /// An item's metadata version is the SHA-256 of its path, a zero byte and its tag, whichever way
    /// it is made: a version a device recorded before stays the version of the same item.
    @Test func theMetadataVersionIsTheDigestOfPathAndTag() {
        for (path, tag) in [("docs/a.txt", "\"5e-62a1\""), ("", ""), ("caf\u{e9}/\u{1F389}.txt", "W/\"x\"")] {
            let expected = Data(SHA256.hash(data: Data((path + "\u{0}" + tag).utf8)))
            #expect(WebDAVProvider.metadataVersion(path, etag: tag) == expected, "\(path)")
        }
    }
}
