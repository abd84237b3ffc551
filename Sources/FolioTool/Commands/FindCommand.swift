import ArgumentParser
import Folio
import Foundation

/// `folio find`: Spotlight's query language, as `mdfind` speaks it — a query string
/// (`kMDItemFSName == "*.pdf"c && kMDItemFSSize > 100000`) or plain words (each must begin a word
/// of the name, the text or a tag, case and accents aside).
struct FindCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "find",
        abstract: "Find items as mdfind does: a Spotlight query string or plain words, in the indexed folders or -onlyin one.",
        discussion: """
            Query strings compare attributes with ==, !=, <, >, <=, >= and InRange(attribute, low, high), joined with && and ||:
              folio find 'kMDItemFSName == "*.pdf"c && kMDItemFSContentChangeDate >= $time.this_week'
              folio find 'kMDItemContentTypeTree == "public.image" && InRange(kMDItemFSSize, 10000, 1000000)'
            Strings take * and ? wildcards and the modifiers c (case), d (diacritics) and w (words): "report"cdw.
            Dates: $time.now, $time.today, $time.yesterday, $time.this_week, $time.this_month, $time.this_year
            (each with an offset in its unit: $time.today(-1)), $time.iso("2026-11-25T10:00:00Z").
            Plain words find items whose name, text or tags hold words beginning with each of them: folio find budget 2026
            """)

    @Argument(parsing: .remaining, help: "A query string, or plain words.") var query: [String] = []
    @Option(name: .customLong("onlyin", withSingleDash: true), help: "Search only this folder (repeatable; default: every indexed folder).")
    var folders: [String] = []
    @Option(name: .customLong("name", withSingleDash: true), help: "Items whose name contains this text (case and accents aside).")
    var name: String?
    @Flag(name: .customLong("live", withSingleDash: true), help: "Keep running and print changes as they happen.") var live = false
    @Flag(name: .customLong("count", withSingleDash: true), help: "Print only how many items match.") var count = false
    @Flag(name: .customShort("0"), help: "End each path with a NUL byte instead of a newline (for xargs -0).") var nul = false
    @Flag(help: "Print JSON lines.") var json = false

    func run() throws {
        let predicate: MetadataPredicate
        do {
            predicate = try Self.predicate(query: query.joined(separator: " "), name: name)
        } catch {
            printError("folio find: \(error)")
            throw ExitCode(2)
        }
        let scopes = try folders.isEmpty ? Self.indexedFolders() : folders.map { URL(fileURLWithPath: $0).standardizedFileURL }
        let output: QueryRunner.Output = count ? .count : nul ? .nul : json ? .json : .paths
        var runner = QueryRunner(command: "folio find", output: output, live: live)
        let words = query.joined(separator: " ").trimmingCharacters(in: .whitespaces)
        if !count, !words.isEmpty, Self.isPlainWords(words) {
            // Plain words: the results best first, names then text (bm25), as the index ranks them.
            runner.ranking = Self.ranking(Search(text: words, limit: Self.ranked, content: true, folders: scopes.map(\.path)))
        }
        try runner.run(predicate, scopes: scopes, sortedBy: [])
    }

    /// How many results plain words are ranked for; the rest follow in the index's order.
    static let ranked = 1000

    /// The daemon's order for plain words, or nil without a daemon (the query runs in process then).
    private static func ranking(_ search: Search) -> QueryRunner.Ranking? {
        guard let engine = try? DaemonCoordinationEngine(socketPath: FolioPaths().socketPath) else { return nil }
        defer { engine.disconnect() }
        return (try? engine.send(search)).map { QueryRunner.Ranking(items: $0["items"]?.arrayValue ?? []) }
    }

    /// The predicate of a query string (or plain words) and a `-name`, both when both are given.
    static func predicate(query: String, name: String?) throws -> MetadataPredicate {
        var parts: [MetadataPredicate] = []
        let text = query.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty { parts.append(try queryPredicate(text)) }
        if let name {
            parts.append(try MetadataPredicate(metadataQueryString: "kMDItemFSName == \"*\(escaped(name))*\"cd"))
        }
        guard let first = parts.first else {
            throw ValidationError("give a query, plain words or -name")
        }
        return parts.dropFirst().reduce(first) { $0 && $1 }
    }

    /// Whether `text` has no comparison in it: plain words, not a query string.
    static func isPlainWords(_ text: String) -> Bool {
        !["==", "!=", "<", ">", "="].contains(where: text.contains) && !text.lowercased().contains("inrange(")
    }

    /// A query string; text that has no comparison in it is plain words.
    static func queryPredicate(_ text: String) throws(MetadataPredicateError) -> MetadataPredicate {
        do {
            return try MetadataPredicate(metadataQueryString: text)
        } catch {
            guard isPlainWords(text) else { throw error }
            var words: [MetadataPredicate] = []
            for word in text.split(whereSeparator: \.isWhitespace) {
                words.append(try MetadataPredicate(metadataQueryString: "* == \"\(escaped(String(word)))\"cdw"))
            }
            guard let first = words.first else { throw error }
            return words.dropFirst().reduce(first) { $0 && $1 }
        }
    }

    private static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            if character == "\"" || character == "\\" || character == "*" || character == "?" { result.append("\\") }
            result.append(character)
        }
        return result
    }

    /// The folders the daemon's index covers.
    static func indexedFolders() throws -> [URL] {
        let status = try withDaemon("find") { try $0.send(IndexStatus()) }
        let roots = (status["roots"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }
        guard !roots.isEmpty else {
            printError("folio find: the index covers no folder: add one with folio index add, or search one with -onlyin")
            throw ExitCode.failure
        }
        return roots.map { URL(fileURLWithPath: $0) }
    }
}
