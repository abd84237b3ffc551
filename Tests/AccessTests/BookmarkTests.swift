@testable import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

/// Runs `body` with a private signing key.
func withKey<T>(_ bytes: [UInt8] = Array(repeating: 7, count: 32), _ body: () throws -> T) rethrows -> T {
    try BookmarkKeys.$override.withValue(BookmarkKey(bytes: bytes)) { try body() }
}

@Suite("Bookmarks and security scope (§9 33–35)", .elasticPool)
struct BookmarkTests {
    /// A bookmark follows its document, not a copy of it: moved away, with a `cp -a` copy (which
    /// carries the identity attribute) left at its old path, it resolves to the moved original;
    /// saved by rename (a new inode with the identity), it resolves to the saved file.
    @Test func bookmarksFollowTheDocumentNotACopy() throws {
        let dir = try TemporaryDirectory("bookmark-copy")
        let original = try dir.write("Projects/report.txt", "draft")
        try withKey {
            let data = try original.bookmarkData()
            try FileManager.default.createDirectory(at: dir.child("Archive"), withIntermediateDirectories: true)
            let moved = dir.child("Archive/report.txt")
            try FileManager.default.moveItem(at: original, to: moved)
            #expect(try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", moved.path, original.path]).status == 0)
            var stale = false
            #expect(try URL(resolvingBookmarkData: data, bookmarkDataIsStale: &stale).path == moved.path && stale)

            let fresh = try moved.bookmarkData()
            try SafeSave.write(Data("final".utf8), to: moved.path, preservingAttributesOf: moved.path)
            #expect(try URL(resolvingBookmarkData: fresh, bookmarkDataIsStale: &stale).path == moved.path)
        }
    }

    /// 33. Renamed or moved within the volume: resolves to the new path, stale; a fresh bookmark is not.
    @Test func bookmarksFollowRenamesAndMoves() throws {
        let dir = try TemporaryDirectory("bookmarks")
        let original = try dir.write("Projects/report.txt", "draft")
        try withKey {
            let data = try original.bookmarkData()
            var stale = false
            let same = try URL(resolvingBookmarkData: data, bookmarkDataIsStale: &stale)
            #expect(same.path == original.path && !stale)

            let renamed = dir.child("Projects/report-final.txt")
            try FileManager.default.moveItem(at: original, to: renamed)
            let afterRename = try URL(resolvingBookmarkData: data, bookmarkDataIsStale: &stale)
            #expect(afterRename.path == renamed.path && stale)

            try FileManager.default.createDirectory(at: dir.child("Archive/2026"), withIntermediateDirectories: true)
            let moved = dir.child("Archive/2026/report-final.txt")
            try FileManager.default.moveItem(at: renamed, to: moved)
            stale = false
            let afterMove = try URL(resolvingBookmarkData: data, bookmarkDataIsStale: &stale)
            #expect(afterMove.path == moved.path && stale)

            let fresh = try afterMove.bookmarkData()
            #expect(try URL(resolvingBookmarkData: fresh, bookmarkDataIsStale: &stale).path == moved.path && !stale)

            // Kept in a file of its own and read back, as Apple's alias files are.
            let file = dir.child("report.bookmark")
            try URL.writeBookmarkData(fresh, to: file)
            #expect(try URL.bookmarkData(withContentsOf: file) == fresh)
            try dir.write("not-a-bookmark", "plain text")
            #expect(throws: CocoaError.self) { try URL.bookmarkData(withContentsOf: dir.child("not-a-bookmark")) }

            // Alias files: the bookmark file resolves to where the item is now, a symbolic link to
            // its destination, anything else to itself; a link to nothing is an error.
            let renamedAgain = dir.child("Archive/2026/report-v3.txt")
            try FileManager.default.moveItem(at: moved, to: renamedAgain)
            #expect(try URL(resolvingAliasFileAt: file).path == renamedAgain.path)
            try FileManager.default.createSymbolicLink(atPath: dir.child("latest").path, withDestinationPath: "Archive/2026/report-v3.txt")
            #expect(try URL(resolvingAliasFileAt: dir.child("latest")).path == renamedAgain.path)
            #expect(try URL(resolvingAliasFileAt: dir.child("not-a-bookmark")).path == dir.child("not-a-bookmark").path)
            try FileManager.default.createSymbolicLink(atPath: dir.child("dangling").path, withDestinationPath: "gone.txt")
            #expect(throws: CocoaError.self) { try URL(resolvingAliasFileAt: dir.child("dangling")) }
            #expect(throws: CocoaError.self) { try URL(resolvingAliasFileAt: dir.child("absent")) }
        }
    }

    /// A document saved by rename (a new inode) and then renamed is still found, by its identity.
    @Test func safeSavedThenRenamedItemsAreFoundByIdentity() throws {
        let dir = try TemporaryDirectory("bookmarks")
        let url = try dir.write("notes.txt", "v1")
        try withKey {
            let data = try url.bookmarkData()
            try SafeSave.write(Data("v2".utf8), to: url.path, preservingAttributesOf: url.path)
            let renamed = dir.child("notes-2.txt")
            try FileManager.default.moveItem(at: url, to: renamed)
            var stale = false
            #expect(try URL(resolvingBookmarkData: data, bookmarkDataIsStale: &stale).path == renamed.path && stale)
        }
    }

    /// 34. A deleted target: resolving throws NSFileNoSuchFileError; stored values stay readable.
    @Test func deletedTargetsFailButKeepTheirStoredValues() throws {
        let dir = try TemporaryDirectory("bookmarks")
        let url = try dir.write("gone.txt", "12345")
        try withKey {
            let data = try url.bookmarkData(includingResourceValuesForKeys: [.fileSizeKey, .nameKey])
            try FileManager.default.removeItem(at: url)
            var stale = false
            #expect { try URL(resolvingBookmarkData: data, bookmarkDataIsStale: &stale) } throws: {
                ($0 as? CocoaError)?.code == .fileNoSuchFile
            }
            let values = URL.resourceValues(forKeys: [.fileSizeKey, .nameKey], fromBookmarkData: data)
            #expect(values?.fileSize == 5 && values?.name == "gone.txt")
        }
    }

    /// 35. Starts nest, the last stop ends access, extra stops do nothing; an unscoped URL says false
    /// and stays readable.
    @Test func securityScopeNesting() throws {
        let dir = try TemporaryDirectory("bookmarks")
        let url = try dir.write("shared.txt", "x")
        try withKey {
            let data = try url.bookmarkData()
            var stale = false
            let scoped = try URL(resolvingBookmarkData: data, options: .withoutImplicitStartAccessing, bookmarkDataIsStale: &stale)
            let path = CoordinationPath.normalize(scoped.path)
            #expect(!SecurityScopes.shared.isAccessing(path))
            #expect(scoped.startAccessingSecurityScopedResource())
            #expect(scoped.startAccessingSecurityScopedResource())
            scoped.stopAccessingSecurityScopedResource()
            #expect(SecurityScopes.shared.isAccessing(path))
            scoped.stopAccessingSecurityScopedResource()
            #expect(!SecurityScopes.shared.isAccessing(path))
            scoped.stopAccessingSecurityScopedResource()
            #expect(!SecurityScopes.shared.isAccessing(path))
            #expect(SecurityScopes.shared.isReadOnly(path) == false)
        }
        let own = try dir.write("Container/Documents/mine.txt", "mine")
        #expect(!own.startAccessingSecurityScopedResource())
        #expect(try String(contentsOf: own, encoding: .utf8) == "mine")
    }

    @Test func readOnlyScopesAndTheLimit() throws {
        let dir = try TemporaryDirectory("bookmarks")
        let url = try dir.write("ro.txt", "x")
        try withKey {
            let data = try url.bookmarkData(options: [.withSecurityScope, .securityScopeAllowOnlyReadAccess])
            var stale = false
            let scoped = try URL(resolvingBookmarkData: data, options: .withSecurityScope, bookmarkDataIsStale: &stale)
            #expect(SecurityScopes.shared.isReadOnly(CoordinationPath.normalize(scoped.path)) == true)
            #expect(SecurityScopes.shared.isAccessing(CoordinationPath.normalize(scoped.path)), "resolution starts access implicitly")
        }
        let limited = SecurityScopes(maximumActive: 2)
        for name in ["a", "b", "c"] { limited.grant("/x/\(name)", readOnly: false) }
        #expect(limited.start("/x/a") && limited.start("/x/b") && limited.start("/x/a"))
        #expect(!limited.start("/x/c"), "past the limit a start fails (and is logged)")
        limited.stop("/x/b")
        #expect(limited.start("/x/c"))
    }

    @Test func relativeBookmarksFollowTheirBase() throws {
        let dir = try TemporaryDirectory("bookmarks")
        let url = try dir.write("Container/Documents/chapter.txt", "text")
        try withKey {
            let data = try url.bookmarkData(relativeTo: dir.child("Container"))
            let movedBase = dir.child("Restored")
            try FileManager.default.moveItem(at: dir.child("Container"), to: movedBase)
            var stale = false
            let resolved = try URL(resolvingBookmarkData: data, relativeTo: movedBase, bookmarkDataIsStale: &stale)
            #expect(resolved.path == movedBase.appendingPathComponent("Documents/chapter.txt").path)
        }
    }

    @Test func forgedEditedTruncatedAndForeignBookmarksAreRefused() throws {
        let dir = try TemporaryDirectory("bookmarks")
        let url = try dir.write("secret.txt", "x")
        let data = try withKey { try url.bookmarkData() }
        var candidates: [(String, Data)] = []
        var edited = data
        edited[20] ^= 0x01
        candidates.append(("edited", edited))
        candidates.append(("truncated", data.prefix(data.count - 5)))
        candidates.append(("padded", data + Data([0])))
        candidates.append(("random", Data((0..<200).map { _ in UInt8.random(in: 0...255) })))
        candidates.append(("empty", Data()))
        let forged = try withKey(Array(repeating: 9, count: 32)) { try url.bookmarkData() }
        candidates.append(("another key", forged))
        withKey {
            for (name, candidate) in candidates {
                var stale = false
                #expect(throws: CocoaError.self, "\(name)") { try URL(resolvingBookmarkData: candidate, bookmarkDataIsStale: &stale) }
                #expect(URL.resourceValues(forKeys: [.nameKey], fromBookmarkData: candidate) == nil, "\(name)")
            }
        }
    }
}
