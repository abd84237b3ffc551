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
    /// remembered, an empty one has none; an edit that adds a word (here to the empty document)
    /// brings the document into a live query for it; `folio find` with plain words finds it
    /// through the daemon.
    @Test func documentsAreFoundByTheirWords() async throws {
        let world = try await IndexWorld("index-content") { dir in
            try dir.write("docs/notes.txt", "The quarterly budget is ready.\n")
            try dir.write("docs/web/page.html", "<html><body><h1>Annual Report</h1><p>for the caf&eacute;</p><script>var hiddenword = 1;</script></body></html>")
            try dir.write("docs/README", "plain words without an extension: zanzibar\n")
            try dir.write("docs/other.txt", "nothing relevant")
            try dir.write("docs/empty.txt", "")
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
        #expect(try await found("NOT kMDItemTextContent == 'budget' AND kMDItemFSName LIKE '*.txt'") == ["other.txt", "empty.txt"])
        let states = Dictionary(uniqueKeysWithValues: try world.sql("SELECT name, IFNULL(content_state, '-'), IFNULL(content_error, '') FROM items WHERE kind = 0").map { ($0[0], ($0[1], $0[2])) })
        #expect(states["notes.txt"]?.0 == "0")
        #expect(states["picture.png"]?.0 == "-")
        // An empty document has no text: marked so without a worker's read.
        #expect(states["empty.txt"]?.0 == "-")
        #expect(states["broken.pdf"]?.0 == "2" && states["broken.pdf"]?.1.isEmpty == false, "\(states)")

        // Live: an edit that adds the word brings the document in.
        let query = try world.query("kMDItemTextContent == 'pineapple'")
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        #expect(query.resultCount == 0)
        try "a pineapple pie".write(toFile: docs + "/empty.txt", atomically: false, encoding: .utf8)
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(docs + "/empty.txt") } })
        try "no fruit at all".write(toFile: docs + "/empty.txt", atomically: false, encoding: .utf8)
        #expect(await recorder.wait { recorder.updates.contains { $0.removed.contains(docs + "/empty.txt") } })
        query.stop()

        // `folio find` with plain words: names, text and tags, through the daemon's index.
        let out = try ProcessRunner.folio(["find", "quarterly"], environment: world.environment)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.split(separator: "\n") == [Substring(docs + "/notes.txt")], "\(out.stdout)")
    }

    /// `search` with `content`: names first, then documents by how well their text matches (bm25:
    /// more of the words in less text first), each text match with its passage, the words marked;
    /// `folders` keeps the results inside them; `folio search --content` prints the passages and
    /// `folio find` prints plain words' results in the same order.
    @Test func searchRanksNamesThenTextWithPassages() async throws {
        let world = try await IndexWorld("index-rank") { dir in
            try dir.write("docs/Budget plan.txt", "nothing to see")
            try dir.write("docs/often.txt", "budget budget budget: the budget")
            try dir.write("docs/once.txt", "A long letter about the weather, the garden, the neighbours and the cat, and then, at last, the budget, and more of the garden.")
            try dir.write("docs/never.txt", "no match here")
            try dir.write("docs/sub/inside.txt", "the budget inside a folder")
        }
        let docs = world.docs.path
        try await world.waitUntilIdle()
        let reply = try world.send(Search(text: "Budget", content: true))
        let items = reply["items"]?.arrayValue ?? []
        let paths = items.compactMap { $0["p"]?.stringValue.map { String($0.dropFirst(docs.count + 1)) } }
        #expect(paths == ["Budget plan.txt", "often.txt", "sub/inside.txt", "once.txt"], "\(paths)")
        let often = items.first { $0["p"]?.stringValue == docs + "/often.txt" }?["snippet"]?.stringValue
        #expect(often == "\u{2}budget\u{3} \u{2}budget\u{3} \u{2}budget\u{3}: the \u{2}budget\u{3}", "\(String(describing: often))")
        #expect(items.first?["snippet"] == nil)
        let inside = try world.send(Search(text: "budg", content: true, folders: [docs + "/sub"]))["items"]?.arrayValue ?? []
        #expect(inside.compactMap { $0["p"]?.stringValue } == [docs + "/sub/inside.txt"])
        // One letter searches names only: every word begins with some letter.
        let letter = try world.send(Search(text: "b", content: true))["items"]?.arrayValue ?? []
        #expect(letter.compactMap { $0["p"]?.stringValue } == [docs + "/Budget plan.txt"])
        // Without `content`, names only.
        #expect(try world.send(Search(text: "budget"))["items"]?.arrayValue?.count == 1)

        let cli = try ProcessRunner.folio(["search", "--content", "budget"], environment: world.environment)
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(cli.stdout.split(separator: "\n").contains("    budget budget budget: the budget"), "\(cli.stdout)")
        let find = try ProcessRunner.folio(["find", "budget"], environment: world.environment)
        #expect(find.stdout.split(separator: "\n").map { String($0.dropFirst(docs.count + 1)) } == paths, "\(find.stdout)")
    }

    /// `NSMetadataQueryResultContentRelevanceAttribute` as Apple's: each result of a query over
    /// `kMDItemTextContent` has a relevance between 0 and 1 (more of the words in less text is
    /// higher), read through `value(ofAttribute:forResultAt:)` and usable as a sort key, live
    /// updates included; a query that reads no text has none.
    @Test func textResultsCarryTheirRelevance() async throws {
        let world = try await IndexWorld("index-relevance") { dir in
            try dir.write("docs/often.txt", "budget budget budget: the budget")
            try dir.write("docs/once.txt", "A long letter about the weather, the garden, the neighbours and the cat, and then, at last, the budget, and more of the garden.")
            try dir.write("docs/never.txt", "no match here")
        }
        let docs = world.docs.path
        try await world.waitUntilIdle()
        let query = try world.query("kMDItemTextContent == 'budget'")
        query.sortDescriptors = [MetadataSortDescriptor(key: NSMetadataQueryResultContentRelevanceAttribute, ascending: false)]
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        func relevances() -> [String: Double] {
            var result: [String: Double] = [:]
            for index in 0..<query.resultCount {
                let item = query.result(at: index) as! MetadataItem
                let name = String(item.path.dropFirst(docs.count + 1))
                result[name] = (query.value(ofAttribute: NSMetadataQueryResultContentRelevanceAttribute, forResultAt: index) as? NSNumber)?.doubleValue ?? -1
            }
            return result
        }
        let gathered = relevances()
        let order = (0..<query.resultCount).map { ((query.result(at: $0) as! MetadataItem).path as NSString).lastPathComponent }
        #expect(order == ["often.txt", "once.txt"], "\(gathered)")
        #expect(gathered["often.txt"]! > gathered["once.txt"]! && gathered["once.txt"]! > 0 && gathered["often.txt"]! < 1, "\(gathered)")
        // A document that comes in by an edit has its relevance too.
        try "budget".write(toFile: docs + "/never.txt", atomically: false, encoding: .utf8)
        #expect(await recorder.wait { (relevances()["never.txt"] ?? -1) > 0 }, "\(relevances())")
        #expect(relevances()["never.txt"]! > gathered["once.txt"]!, "\(relevances())")
        query.stop()

        let names = try world.query("kMDItemFSName LIKE '*.txt'")
        let nameRecorder = QueryRecorder(names)
        try world.start(names)
        #expect(await nameRecorder.wait { nameRecorder.names.contains("finish") })
        #expect(names.resultCount == 3 && (0..<3).allSatisfy { names.value(ofAttribute: NSMetadataQueryResultContentRelevanceAttribute, forResultAt: $0) == nil })
        names.stop()
    }

    /// A name search's work is bounded by its limit, however many names match: the names that
    /// start with the text and the recently used come first even when hundreds of others match.
    @Test func nameSearchIsBoundedAndKeepsTheBest() async throws {
        let world = try await IndexWorld("index-bounded") { dir in
            for number in 0..<400 { try dir.write("docs/many/x-python-\(number).txt", "") }
            try dir.write("docs/python.txt", "")
            try dir.write("docs/under_score.txt", "")
            try dir.write("docs/underXscore.txt", "")
            // Crawled last, so the trigram index's first matches do not hold it.
            try dir.write("docs/many/zz/deep/zz-python-used.txt", "")
            // Names with every trigram of `bcde` but not `bcde` itself, crawled before the one
            // that holds it (not at its start): more candidates that do not match than a search's
            // cap.
            for number in 0..<150 { try dir.write("docs/apart/cdeqbcd-\(number).txt", "") }
            try dir.write("docs/many/zz/deep/a-bcde.txt", "")
        }
        let docs = world.docs.path
        try await world.waitUntilIdle()
        let used = docs + "/many/zz/deep/zz-python-used.txt"
        _ = try world.send(RecentsAdd(path: used, event: "opened"))
        let items = try world.send(Search(text: "PYTHON", limit: 5))["items"]?.arrayValue ?? []
        let paths = items.compactMap { $0["p"]?.stringValue }
        #expect(paths.count == 5)
        #expect(Array(paths.prefix(2)) == [docs + "/python.txt", used], "\(paths)")
        #expect(paths.dropFirst(2).allSatisfy { $0.hasPrefix(docs + "/many/x-python-") })
        // `_` and `%` are characters of the text, not wildcards.
        let underscore = try world.send(Search(text: "r_s"))["items"]?.arrayValue?.compactMap { $0["p"]?.stringValue }
        #expect(underscore == [docs + "/under_score.txt"])
        // The trigram index keeps no positions: its candidates are checked, and the cap counts
        // the names found, not the candidates.
        let apart = try world.send(Search(text: "bcde", limit: 1))["items"]?.arrayValue?.compactMap { $0["p"]?.stringValue }
        #expect(apart == [docs + "/many/zz/deep/a-bcde.txt"])
    }
}

