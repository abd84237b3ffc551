// Samples 7–8 of Apple's documentation article "Providing access to directories" (UIKit):
// saving a security-scoped URL as bookmark data, and resolving it with the stale check.
//
// Lines changed from Apple's: the snippets are bare statements in the article; here each is the
// body of a function, `getMyURLForBookmark()` (the article's placeholder) is a member, and the
// "Handle … here" comments record what happened so a test can check it.
import Folio
import FolioTestTraits
import Foundation
import Testing

final class BookmarkKeeper {
    let bookmarkFile: URL
    var failure: String?
    var resolved: URL?

    init(bookmarkFile: URL) { self.bookmarkFile = bookmarkFile }

    func getMyURLForBookmark() -> URL { bookmarkFile }

    func save(_ url: URL) {
        do {
            // Start accessing a security-scoped resource.
            guard url.startAccessingSecurityScopedResource() else {
                // Handle the failure here.
                failure = "no access"
                return
            }

            // Make sure you release the security-scoped resource when you finish.
            defer { url.stopAccessingSecurityScopedResource() }

            let bookmarkData = try url.bookmarkData(options: .minimalBookmark, includingResourceValuesForKeys: nil, relativeTo: nil)

            try bookmarkData.write(to: getMyURLForBookmark())
        }
        catch let error {
            // Handle the error here.
            failure = "\(error)"
        }
    }

    func resolve() {
        do {
            let bookmarkData = try Data(contentsOf: getMyURLForBookmark())
            var isStale = false
            let url = try URL(resolvingBookmarkData: bookmarkData, bookmarkDataIsStale: &isStale)

            guard !isStale else {
                // Handle stale data here.
                failure = "stale"
                return
            }

            // Use the URL here.
            resolved = url
        }
        catch let error {
            // Handle the error here.
            failure = "\(error)"
        }
    }
}

@Suite("Apple's samples: Providing access to directories", .elasticPool)
struct SecurityScopedBookmarkTests {
    @Test func aBookmarkIsSavedAndResolvedAndGoesStaleAfterARename() async throws {
        let world = try PortWorld("bookmarks")
        try await world.run {
            let folder = world.url("Projects")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let keeper = BookmarkKeeper(bookmarkFile: world.url("projects.bookmark"))
            keeper.save(folder)
            #expect(keeper.failure == "no access", "a URL nobody granted carries no scope")
            keeper.failure = nil
            // The folder as the document picker hands it over: a security-scoped URL (here from a
            // bookmark resolved, which is how Folio's picker grants reach an app).
            var stale = false
            let picked = try URL(resolvingBookmarkData: folder.bookmarkData(), bookmarkDataIsStale: &stale)
            keeper.save(picked)
            #expect(keeper.failure == nil)
            keeper.resolve()
            #expect(keeper.failure == nil && keeper.resolved?.path == folder.path)

            try FileManager.default.moveItem(at: folder, to: world.url("Projects 2026"))
            keeper.resolved = nil
            keeper.resolve()
            #expect(keeper.failure == "stale" && keeper.resolved == nil)
        }
    }
}
