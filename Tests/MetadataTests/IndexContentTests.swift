@testable import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("The index finds documents by their words", .elasticPool)
struct IndexContentTests {
    /// After the crawl and the typing, every document's text is read by the sandboxed extractor:
    /// queries over `kMDItemTextContent` find documents by their words (case and accents aside,
    /// the last word as a prefix), never by markup or scripts; a file the extractor fails on is
    /// remembered; an edit that adds a word brings the document into a live query for it; `folio
    /// find` with plain words finds it through the daemon.
    @Test func documentsAreFoundByTheirWords() async throws {
        let world = try await IndexWorld("index-content") { dir in
            try dir.write("docs/notes.txt", "The quarterly budget is ready.\n")
            try dir.write("docs/web/page.html", "<html><body><h1>Annual Report</h1><p>for the caf&eacute;</p><script>var hiddenword = 1;</script></body></html>")
            try dir.write("docs/README", "plain words without an extension: zanzibar\n")
            try dir.write("docs/other.txt", "nothing relevant")
            try dir.write("docs/broken.pdf", "this is not a PDF")
            try dir.write("docs/picture.png", Data(ThumbnailTests.png))
        }
        let docs = world.docs.path
        try await world.waitUntilIdle()
        func found(_ format: String) async throws -> Set<String> {
            let query = try world.query(format)
            let recorder = QueryRecorder(query)
            try world.start(query)
            #expect(await recorder.wait { recorder.names.contains("finish") })
            defer { query.stop() }
            return Set((query.results as? [MetadataItem])?.map { String($0.path.dropFirst(docs.count + 1)) } ?? [])
        }
        #expect(try await found("kMDItemTextContent == 'budget'") == ["notes.txt"])
        #expect(try await found("kMDItemTextContent CONTAINS[cd] 'QUARTERLY BUD'") == ["notes.txt"])
        #expect(try await found("kMDItemTextContent == 'annual rep'") == ["web/page.html"])
        #expect(try await found("kMDItemTextContent == 'cafe'") == ["web/page.html"])
        #expect(try await found("kMDItemTextContent == 'zanzibar'") == ["README"])
        #expect(try await found("kMDItemTextContent == 'hiddenword'") == [])
        #expect(try await found("kMDItemTextContent == 'html'") == [])
        #expect(try await found("kMDItemTextContent == 'budget' AND kMDItemFSName LIKE '*.txt'") == ["notes.txt"])
        #expect(try await found("NOT kMDItemTextContent == 'budget' AND kMDItemFSName LIKE '*.txt'") == ["other.txt"])
        let states = Dictionary(uniqueKeysWithValues: try world.sql("SELECT name, IFNULL(content_state, '-'), IFNULL(content_error, '') FROM items WHERE kind = 0").map { ($0[0], ($0[1], $0[2])) })
        #expect(states["notes.txt"]?.0 == "0")
        #expect(states["picture.png"]?.0 == "-")
        #expect(states["broken.pdf"]?.0 == "2" && states["broken.pdf"]?.1.isEmpty == false, "\(states)")

        // Live: an edit that adds the word brings the document in.
        let query = try world.query("kMDItemTextContent == 'pineapple'")
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        #expect(query.resultCount == 0)
        try "a pineapple pie".write(toFile: docs + "/other.txt", atomically: false, encoding: .utf8)
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(docs + "/other.txt") } })
        try "no fruit at all".write(toFile: docs + "/other.txt", atomically: false, encoding: .utf8)
        #expect(await recorder.wait { recorder.updates.contains { $0.removed.contains(docs + "/other.txt") } })
        query.stop()

        // `folio find` with plain words: names, text and tags, through the daemon's index.
        let out = try ProcessRunner.folio(["find", "quarterly"], environment: world.environment)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.split(separator: "\n") == [Substring(docs + "/notes.txt")], "\(out.stdout)")
    }
}
