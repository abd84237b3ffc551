import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Spotlight's query language (`NSPredicate(fromMetadataQueryString:)`, `mdfind`), parsed and
/// evaluated against items with known attributes, and `folio find` on a tree.
@Suite("MetadataPredicate(fromMetadataQueryString:) and folio find", .elasticPool)
struct MetadataQueryStringTests {
    /// A fixed present: Wednesday 25 November 2026, 12:00 in this process's time zone.
    static let now: Date = {
        var parts = DateComponents()
        (parts.year, parts.month, parts.day, parts.hour) = (2026, 11, 25, 12)
        return Calendar.current.date(from: parts)!
    }()

    struct Item {
        var name: String
        var size: Int64 = 100
        var modified: Date = now
        var tags: [String] = []
        var tree = ["public.plain-text", "public.text", "public.data", "public.item"]

        func value(_ attribute: MetadataAttribute) -> MetadataValue? {
            switch attribute {
            case .fsName, .displayName: .string(name)
            case .fsSize: .integer(size)
            case .fsContentChangeDate: .date(modified)
            case .userTags: tags.isEmpty ? nil : .array(tags.map { .string($0) })
            case .contentType: .string(tree[0])
            case .contentTypeTree: .array(tree.map { .string($0) })
            default: nil
            }
        }
    }

    static let day: TimeInterval = 86_400
    static let items: [Item] = [
        Item(name: "Paris", size: 10),
        Item(name: "paris", size: 2_000),
        Item(name: "I love Paris.txt", size: 1_500, modified: now.addingTimeInterval(-2 * day)),
        Item(name: "paris-france.jpg", size: 50_000, modified: now.addingTimeInterval(-40 * day), tree: ["public.jpeg", "public.image", "public.data", "public.item"]),
        Item(name: "Comparison.pdf", size: 0x1F, modified: now.addingTimeInterval(-400 * day), tags: ["Work"]),
        Item(name: "MyWindow.swift", size: 5, modified: now.addingTimeInterval(-3600)),
        Item(name: "Été 2026.md", size: 700, modified: now.addingTimeInterval(-8 * day)),
        Item(name: "star*name", size: 1),
    ]

    /// Query strings and the names they find among `items`.
    static let table: [(String, Set<String>)] = [
        ("kMDItemFSName == \"Paris\"", ["Paris"]),
        ("kMDItemFSName == \"Paris\"c", ["Paris", "paris"]),
        ("kMDItemFSName ==[c] 'PARIS'", ["Paris", "paris"]),
        ("kMDItemFSName == \"Paris\"wc", ["Paris", "paris", "I love Paris.txt", "paris-france.jpg"]),
        ("kMDItemFSName == \"Window\"w", ["MyWindow.swift"]),
        ("kMDItemFSName == \"window\"w", []),
        ("kMDItemFSName == \"Paris*\"", ["Paris"]),
        ("kMDItemFSName == \"*Paris*\"", ["Paris", "I love Paris.txt"]),
        ("kMDItemFSName == \"*paris*\"c", ["Paris", "paris", "I love Paris.txt", "paris-france.jpg", "Comparison.pdf"]),
        ("kMDItemFSName == \"*.PDF\"c", ["Comparison.pdf"]),
        ("kMDItemFSName == \"?aris\"", ["Paris", "paris"]),
        ("kMDItemFSName == \"ete*\"cd", ["Été 2026.md"]),
        ("kMDItemFSName == \"ete*\"c", []),
        ("kMDItemFSName == \"star\\*name\"", ["star*name"]),
        ("kMDItemFSName != \"*.*\"", ["Paris", "paris", "star*name"]),
        ("kMDItemFSSize > 1000 && kMDItemFSSize < 10000", ["paris", "I love Paris.txt"]),
        ("kMDItemFSSize == 0x1F", ["Comparison.pdf"]),
        ("kMDItemFSSize >= 5e4", ["paris-france.jpg"]),
        ("InRange(kMDItemFSSize, 5, 31)", ["Paris", "Comparison.pdf", "MyWindow.swift"]),
        ("(kMDItemFSSize < 6 || kMDItemFSSize > 40000) && kMDItemFSName != \"star*\"", ["MyWindow.swift", "paris-france.jpg"]),
        ("!(kMDItemFSSize < 1000)", ["paris", "I love Paris.txt", "paris-france.jpg"]),
        ("kMDItemFSContentChangeDate >= $time.today", ["Paris", "paris", "MyWindow.swift", "star*name"]),
        ("kMDItemFSContentChangeDate >= $time.now(-7200) && kMDItemFSContentChangeDate < $time.now", ["MyWindow.swift"]),
        ("kMDItemFSContentChangeDate >= $time.today(-3) && kMDItemFSContentChangeDate < $time.yesterday", ["I love Paris.txt"]),
        ("kMDItemFSContentChangeDate < $time.this_year", ["Comparison.pdf"]),
        ("kMDItemFSContentChangeDate >= $time.this_month(-1) && kMDItemFSContentChangeDate < $time.this_month", ["paris-france.jpg"]),
        ("kMDItemFSContentChangeDate < $time.iso(\"2026-01-01\")", ["Comparison.pdf"]),
        ("InRange(kMDItemFSContentChangeDate, $time.today(-9), $time.today(-7))", ["Été 2026.md"]),
        ("kMDItemContentTypeTree == \"public.image\"", ["paris-france.jpg"]),
        ("kMDItemUserTags == \"work\"c", ["Comparison.pdf"]),
        ("* == \"work\"cw", ["Comparison.pdf"]),
        ("* == \"2026\"w", ["Été 2026.md"]),
        ("kMDItemTextContent == \"*\"", []),
    ]

    @Test func spotlightQueryStringsFindWhatTheyShould() throws {
        for (query, expected) in Self.table {
            let predicate = try MetadataPredicate(metadataQueryString: query, now: Self.now)
            let found = Set(Self.items.filter { item in predicate.evaluate(item.value) }.map(\.name))
            #expect(found == expected, "\(query): found \(found.sorted())")
            // What it means survives Apple's format syntax (with Folio's [w]).
            let again = MetadataPredicate(format: predicate.predicateFormat)
            #expect(again == predicate, "\(query) → \(predicate.predicateFormat)")
            #expect(Set(Self.items.filter { again.evaluate($0.value) }.map(\.name)) == expected, "\(query) as \(predicate.predicateFormat)")
        }
        #expect(MetadataPredicate(fromMetadataQueryString: "kMDItemFSName == \"*.pdf\"c") != nil)
    }

    @Test func badQueryStringsAreRefusedWithTheirPlace() {
        let refused: [(String, String)] = [
            ("", "empty"), ("kMDItemFSName == \"open", "never closed"), ("kMDItemNoSuch == 1", "unknown attribute"),
            ("kMDItemFSName == \"x\"q", "modifier"), ("kMDItemFSSize == \"big\"", "not text"), ("kMDItemFSName > \"a\"", "numbers and dates"),
            ("kMDItemFSSize > 1 &&", "expected an attribute"), ("(kMDItemFSSize > 1", "expected )"), ("kMDItemFSSize > $time.today", "not a date"),
            ("kMDItemFSContentChangeDate > $time.someday", "unknown time variable"), ("kMDItemFSContentChangeDate > $time.iso(\"never\")", "ISO 8601"),
            ("InRange(kMDItemFSName, 1, 2)", "number or date attribute"), ("kMDItemFSSize > 1 kMDItemFSSize", "&& or ||"),
            (String(repeating: "(", count: 100) + "kMDItemFSSize > 1", "nested"), ("kMDItemFSSize > 1 # 2", "unexpected character"),
        ]
        for (query, reason) in refused {
            #expect(throws: MetadataPredicateError.self, "\(query)") { try MetadataPredicate(metadataQueryString: query) }
            do {
                _ = try MetadataPredicate(metadataQueryString: query)
            } catch {
                #expect(error.description.contains(reason), "\(query): \(error)")
            }
            #expect(MetadataPredicate(fromMetadataQueryString: query) == nil)
        }
    }

    /// `folio find` on a tree of its own (no daemon: the query walks the folder): query strings,
    /// plain words, -name, -count and -0.
    @Test func folioFindSpeaksMdfind() throws {
        let dir = try TemporaryDirectory("folio-find")
        let env = dir.xdgEnvironment()
        try dir.write("docs/Budget 2026.txt", "numbers")
        try dir.write("docs/notes/MyWindow.swift", "code")
        try dir.write("docs/notes/holiday photo.JPG", "not really")
        try dir.write("docs/Paris trip.md", String(repeating: "x", count: 5000))
        let docs = dir.child("docs").path
        func find(_ arguments: [String]) throws -> (status: Int32, lines: [String], stderr: String) {
            let out = try ProcessRunner.folio(["find", "-onlyin", docs] + arguments, environment: env)
            return (out.status, out.stdout.split(separator: "\n").map { String($0.dropFirst(docs.count + 1)) }.sorted(), out.stderr)
        }
        #expect(try find(["kMDItemFSName == \"*.jpg\"c"]).lines == ["notes/holiday photo.JPG"])
        #expect(try find(["kMDItemFSSize > 1000"]).lines == ["Paris trip.md"])
        #expect(try find(["budget"]).lines == ["Budget 2026.txt"])
        #expect(try find(["window"]).lines == ["notes/MyWindow.swift"])
        #expect(try find(["par", "tri"]).lines == ["Paris trip.md"])
        #expect(try find(["-name", "photo"]).lines == ["notes/holiday photo.JPG"])
        let counted = try ProcessRunner.folio(["find", "-onlyin", docs, "-count", "kMDItemFSName == \"*\""], environment: env)
        #expect(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "5")
        let nul = try ProcessRunner.folio(["find", "-onlyin", docs, "-0", "kMDItemFSName == \"*.md\""], environment: env)
        #expect(nul.stdout == docs + "/Paris trip.md\0")
        let bad = try find(["kMDItemFSSize > \"big\""])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("not text"))
    }
}
