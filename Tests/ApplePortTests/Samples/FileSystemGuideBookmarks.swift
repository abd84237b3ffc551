// Samples 32–33 of Apple's "File System Programming Guide", chapter "Accessing Files and
// Directories": Listing 2-3 (a URL to persistent bookmark data) and Listing 2-4 (bookmark data
// back to a URL, without UI, refusing a stale one).
//
// Apple's listings are Objective-C; this is their Swift, line for line (`NSError**` → `throws`,
// caught where the listing tests `theError`). No other line changed.
import Folio
import FolioTestTraits
import Foundation
import Testing

enum BookmarkListings {
    // Listing 2-3: Converting a URL to a persistent form
    static func bookmark(for url: URL) -> Data? {
        let bookmark: Data
        do {
            bookmark = try url.bookmarkData(options: .suitableForBookmarkFile,
                                            includingResourceValuesForKeys: nil,
                                            relativeTo: nil)
        } catch {
            // Handle any errors.
            return nil
        }
        return bookmark
    }

    // Listing 2-4: Returning a persistent reference to its URL form
    static func url(for bookmark: Data) -> URL? {
        var bookmarkIsStale = false
        let bookmarkURL: URL
        do {
            bookmarkURL = try URL(resolvingBookmarkData: bookmark,
                                  options: .withoutUI,
                                  relativeTo: nil,
                                  bookmarkDataIsStale: &bookmarkIsStale)
        } catch {
            // Handle any errors
            return nil
        }
        if bookmarkIsStale {
            // Handle any errors
            return nil
        }
        return bookmarkURL
    }
}

@Suite("Apple's samples: File System Programming Guide", .elasticPool)
struct FileSystemGuideBookmarkTests {
    /// A bookmark made of a file resolves to it; once the file is renamed the bookmark is stale
    /// (the listing refuses it), and bytes that are no bookmark resolve to nothing.
    @Test func aBookmarkRoundTripsAndStaleOnesAreRefused() async throws {
        let world = try PortWorld("bookmark-listings")
        try await world.run {
            let file = world.url("Report.txt")
            try Data("report".utf8).write(to: file)
            let bookmark = try #require(BookmarkListings.bookmark(for: file))
            #expect(BookmarkListings.url(for: bookmark)?.path == file.path)

            try FileManager.default.moveItem(at: file, to: world.url("Report (final).txt"))
            #expect(BookmarkListings.url(for: bookmark) == nil)
            #expect(BookmarkListings.url(for: Data("not a bookmark".utf8)) == nil)
            #expect(BookmarkListings.bookmark(for: world.url("Missing.txt")) == nil)
        }
    }
}
