import Folio
import Foundation
import Testing
import FolioTestTraits

/// An item for evaluating predicates in tests.
private func item(
    name: String, size: Int64 = 0, type: String = "public.plain-text", tree: [String] = ["public.plain-text", "public.text", "public.data", "public.item"],
    modified: Date = Date(timeIntervalSince1970: 1_700_000_000), tags: [String] = [], conflicts: Bool = false
) -> (MetadataAttribute) -> MetadataValue? {
    { attribute in
        switch attribute {
        case .fsName, .displayName: .string(name)
        case .path: .string("/home/u/" + name)
        case .fsSize: .integer(size)
        case .contentType: .string(type)
        case .contentTypeTree: .array(tree.map { .string($0) })
        case .fsContentChangeDate: .date(modified)
        case .userTags: .array(tags.map { .string($0) })
        case .hasUnresolvedConflicts: .bool(conflicts)
        default: nil
        }
    }
}

@Suite("MetadataPredicate: Apple's format syntax, checked, evaluated", .elasticPool)
struct MetadataPredicateTests {
    @Test func formatsFromAppleCode() throws {
        let notes = item(name: "Notes.txt", size: 1200)
        let photo = item(name: "Été.JPG", size: 5_000_000, type: "public.jpeg", tree: ["public.jpeg", "public.image", "public.data", "public.item"])
        let cases: [(MetadataPredicate, [Bool])] = [
            (MetadataPredicate(format: "%K LIKE %@", NSMetadataItemFSNameKey, "*.txt"), [true, false]),
            (MetadataPredicate(format: "%K like[c] '*.jpg'", NSMetadataItemFSNameKey), [false, true]),
            (MetadataPredicate(format: "kMDItemFSName BEGINSWITH[cd] 'ete'"), [false, true]),
            (MetadataPredicate(format: "kMDItemFSName BEGINSWITH[c] 'ete'"), [false, false]),
            (MetadataPredicate(format: "kMDItemFSSize > 1000 AND kMDItemFSSize < %d", 2000), [true, false]),
            (MetadataPredicate(format: "kMDItemContentTypeTree == 'public.image'"), [false, true]),
            (MetadataPredicate(format: "ANY kMDItemContentTypeTree = \"public.text\""), [true, false]),
            (MetadataPredicate(format: "NOT (kMDItemFSName CONTAINS 'ote') || kMDItemFSSize >= 5e6"), [false, true]),
            (MetadataPredicate(format: "kMDItemContentType IN {'public.jpeg', 'public.png'}"), [false, true]),
            (MetadataPredicate(format: "kMDItemFSSize BETWEEN {1000, 1500}"), [true, false]),
            (MetadataPredicate(format: "kMDItemFSName MATCHES '[A-Z][a-z]+\\\\.txt'"), [true, false]),
            (MetadataPredicate(format: "%K ENDSWITH 'G'", NSMetadataItemFSNameKey), [false, true]),
            (MetadataPredicate(format: "TRUEPREDICATE"), [true, true]),
            (MetadataPredicate(format: "1000 < kMDItemFSSize"), [true, true]),
            (MetadataPredicate(format: "kMDItemFSName != nil && kMDItemLastUsedDate == nil"), [true, true]),
        ]
        for (predicate, expected) in cases {
            #expect([predicate.evaluate(notes), predicate.evaluate(photo)] == expected, "\(predicate)")
        }
    }

    @Test func datesAndTagsAndBooleans() throws {
        let old = item(name: "a", modified: Date(timeIntervalSince1970: 1_000_000_000), tags: ["Work", "Red"])
        let new = item(name: "b", modified: Date(timeIntervalSince1970: 1_800_000_000), conflicts: true)
        let cutoff = Date(timeIntervalSince1970: 1_500_000_000)
        let byArgument = MetadataPredicate(format: "%K > %@", argumentArray: [NSMetadataItemFSContentChangeDateKey, cutoff])
        #expect(!byArgument.evaluate(old) && byArgument.evaluate(new))
        let byCast = MetadataPredicate(format: "kMDItemFSContentChangeDate < CAST(\(cutoff.timeIntervalSinceReferenceDate), \"NSDate\")")
        #expect(byCast.evaluate(old) && !byCast.evaluate(new))
        let tag = MetadataPredicate(format: "'work' IN[c] kMDItemUserTags")
        #expect(tag.evaluate(old) && !tag.evaluate(new))
        let none = MetadataPredicate(format: "NONE kMDItemUserTags == 'Red'")
        #expect(!none.evaluate(old) && none.evaluate(new))
        let conflicted = MetadataPredicate(format: "%K == YES", NSMetadataUbiquitousItemHasUnresolvedConflictsKey)
        #expect(!conflicted.evaluate(old) && conflicted.evaluate(new))
    }

    /// Apple's code as written for `NSPredicate`: no `try`, arguments of any type to `%@`
    /// (`Date`, `NSDate`, `NSNumber`, `URL`, arrays), compound predicates built as
    /// `NSCompoundPredicate`'s are, and LIKE's backslash making a wildcard literal.
    @Test func applesFormsCompileAndHold() {
        let old = item(name: "report*.txt", size: 1200, modified: Date(timeIntervalSince1970: 1_000_000_000))
        let new = item(name: "report1.txt", size: 900, modified: Date(timeIntervalSince1970: 1_800_000_000))
        let cutoff = Date(timeIntervalSince1970: 1_500_000_000)
        let byDate = MetadataPredicate(format: "%K > %@", NSMetadataItemFSContentChangeDateKey, cutoff)
        let byNSDate = MetadataPredicate(format: "%K > %@", NSMetadataItemFSContentChangeDateKey, cutoff as NSDate)
        let byNumber = MetadataPredicate(format: "%K > %@", NSMetadataItemFSSizeKey, NSNumber(value: 1000))
        let byList = MetadataPredicate(format: "%K IN %@", NSMetadataItemFSNameKey, ["report1.txt", "other.txt"])
        let byURL = MetadataPredicate(format: "%K == %@", NSMetadataItemPathKey, URL(fileURLWithPath: "/home/u/report1.txt"))
        #expect([byDate, byNSDate, byNumber, byList, byURL].map { [$0.evaluate(old), $0.evaluate(new)] } == [
            [false, true], [false, true], [true, false], [false, true], [false, true],
        ])
        let both = CompoundPredicate(andPredicateWithSubpredicates: [byNumber, MetadataPredicate(format: "kMDItemFSName BEGINSWITH 'report'")])
        let either = CompoundPredicate(orPredicateWithSubpredicates: [byNumber, byList])
        let neither = CompoundPredicate(notPredicateWithSubpredicate: either)
        #expect([both.evaluate(old), both.evaluate(new)] == [true, false])
        #expect([either.evaluate(old), either.evaluate(new)] == [true, true])
        #expect([neither.evaluate(old), neither.evaluate(new)] == [false, false])
        #expect(CompoundPredicate(andPredicateWithSubpredicates: []).evaluate(old))
        #expect(!CompoundPredicate(orPredicateWithSubpredicates: []).evaluate(old))
        #expect(MetadataPredicate(format: both.predicateFormat) == both)
        #expect(CompoundPredicate(type: .and, subpredicates: [byNumber]).predicateFormat == "kMDItemFSSize > 1000")
        // LIKE: `\*` is a star, `*` any run.
        let literalStar = MetadataPredicate(format: "%K LIKE %@", NSMetadataItemFSNameKey, "report\\*.txt")
        let anyRun = MetadataPredicate(format: "%K LIKE %@", NSMetadataItemFSNameKey, "report*.txt")
        #expect([literalStar.evaluate(old), literalStar.evaluate(new)] == [true, false])
        #expect([anyRun.evaluate(old), anyRun.evaluate(new)] == [true, true])
        #expect(MetadataPredicate(format: "kMDItemFSName LIKE 'report\\\\?.txt'").evaluate(old) == false)
        // Spotlight's query language: an escaped star beside an unescaped one is a star.
        let spotlight = try? MetadataPredicate(metadataQueryString: "kMDItemFSName == \"report\\**\"")
        #expect(spotlight.map { [$0.evaluate(old), $0.evaluate(new)] } == [true, false])
        // The throwing form, for text a person typed.
        #expect(throws: MetadataPredicateError.self) { try MetadataPredicate(parsing: "kMDItemFSName ==") }
        // Options with Apple's bits (`NSComparisonPredicate.Options`); `[n]` kept and harmless.
        let bits: [MetadataPredicate.Options] = [.caseInsensitive, .diacriticInsensitive, .normalized]
        #expect(bits.map(\.rawValue) == [1, 2, 4] && MetadataPredicate.Options.words.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive, .normalized]))
        let normalized = MetadataPredicate(format: "kMDItemFSName ==[cn] 'REPORT1.TXT'")
        #expect([normalized.evaluate(old), normalized.evaluate(new)] == [false, true])
        #expect(MetadataPredicate(format: normalized.predicateFormat) == normalized && normalized.predicateFormat.contains("[cn]"))
        // Comparison predicates built as `NSComparisonPredicate`'s are, equal to their format's.
        let name = MetadataExpression(forKeyPath: NSMetadataItemFSNameKey)
        let built = ComparisonPredicate(
            leftExpression: name, rightExpression: MetadataExpression(forConstantValue: "REPORT1.TXT"), modifier: .direct, type: .equalTo,
            options: [.caseInsensitive])
        #expect(built == MetadataPredicate(format: "kMDItemFSName ==[c] 'REPORT1.TXT'"))
        #expect([built.evaluate(old), built.evaluate(new)] == [false, true])
        let smaller = ComparisonPredicate(
            leftExpression: MetadataExpression(forConstantValue: NSNumber(value: 1000)), rightExpression: MetadataExpression(forKeyPath: NSMetadataItemFSSizeKey),
            modifier: .direct, type: .greaterThan)
        #expect([smaller.evaluate(old), smaller.evaluate(new)] == [false, true])
        let anyTag = ComparisonPredicate(
            leftExpression: MetadataExpression(forKeyPath: "kMDItemUserTags"), rightExpression: MetadataExpression(forConstantValue: "work"), modifier: .any,
            type: .equalTo, options: [.caseInsensitive])
        #expect(anyTag == MetadataPredicate(format: "ANY kMDItemUserTags ==[c] 'work'"))
        #expect(ComparisonPredicate(leftExpression: name, rightExpression: MetadataExpression(forConstantValue: nil), modifier: .direct, type: .notEqualTo)
            .evaluate(old))
        #expect(MetadataPredicate.Modifier.any.rawValue == 2 && MetadataExpression.ExpressionType.keyPath.rawValue == 3)
        #expect(MetadataPredicate(format: "kMDItemFSSize >[n] 1000").evaluate(old))
    }

    @Test func theSwiftBuilderMeansTheSame() throws {
        let built = MetadataAttribute.fsName.like("*.txt", [.caseInsensitive]) && MetadataAttribute.fsSize > 1000
        let parsed = MetadataPredicate(format: "kMDItemFSName LIKE[c] '*.txt' AND kMDItemFSSize > 1000")
        #expect(built == parsed)
        #expect(built.evaluate(item(name: "X.TXT", size: 2000)) && !built.evaluate(item(name: "X.TXT", size: 10)))
        let either = !(MetadataAttribute.contentType == "public.jpeg") || MetadataAttribute.fsSize.between(1, 5)
        #expect(either.evaluate(item(name: "a")))
    }

    /// `predicateFormat` reads back as the same predicate.
    @Test func formatRoundTrips() throws {
        let formats = [
            "kMDItemFSName LIKE[cd] \"*.txt\" AND (kMDItemFSSize > 10 OR NOT kMDItemContentType == \"public.png\")",
            "ALL kMDItemUserTags BEGINSWITH \"a\"", "kMDItemFSContentChangeDate >= CAST(700000000.5, \"NSDate\")",
            "kMDItemContentType IN {\"a.b\", \"c.d\"}", "kMDItemFSName == \"quote \\\" and \\\\ backslash\"", "FALSEPREDICATE",
        ]
        for format in formats {
            let predicate = MetadataPredicate(format: format)
            #expect(MetadataPredicate(format: predicate.predicateFormat) == predicate, "\(format) → \(predicate.predicateFormat)")
        }
    }

    /// Bad predicates fail with the offending token and its offset.
    @Test func errorsPointAtTheOffendingToken() {
        let cases: [(String, [any CVarArg], String, Int)] = [
            ("kMDItemFSNam == 'a'", [], "kMDItemFSNam", 0),
            ("kMDItemFSName == 'a' AND", [], "end of the predicate", 24),
            ("kMDItemFSSize > 'big'", [], "'big'", 16),
            ("kMDItemFSSize LIKE '*'", [], "LIKE", 14),
            ("kMDItemFSName == 'open", [], "'open", 17),
            ("(kMDItemFSName == 'a'", [], "end of the predicate", 21),
            ("kMDItemFSName ~ 'a'", [], "~", 14),
            ("%K == %@", ["kMDItemFSName"], "%@", 6),
            ("kMDItemFSName == 'a' kMDItemFSSize", [], "kMDItemFSSize", 21),
            ("kMDItemFSName BETWEEN {1}", [], "{", 22),
            ("kMDItemFSName MATCHES '(('", [], "'(('", 22),
            ("ANY kMDItemFSName == 'a'", [], "ANY", 0),
            ("kMDItemFSName == $name", [], "$name", 17),
            ("kMDItemFSName ==[x] 'a'", [], "x", 17),
            ("", [], "end of the predicate", 0),
            (",-K,-KE", [], ",", 0),  // found by Fuzz/FuzzPredicate: once an endless recursion
        ]
        for (format, arguments, token, offset) in cases {
            do {
                let predicate = try MetadataPredicate(parsing: format, argumentArray: arguments)
                Issue.record("\(format) was accepted as \(predicate)")
            } catch {
                #expect(error.token == token && error.offset == offset, "\(format): \(error)")
                #expect(error.description.contains("^"))
            }
        }
    }

    /// Hostile input: deep nesting, huge lists, long formats are refused cleanly.
    @Test func hostileFormatsAreRefused() {
        let deep = String(repeating: "(", count: 100) + "TRUEPREDICATE" + String(repeating: ")", count: 100)
        #expect(throws: MetadataPredicateError.self) { try MetadataPredicate(parsing: deep) }
        let nots = String(repeating: "NOT ", count: 100) + "TRUEPREDICATE"
        #expect(throws: MetadataPredicateError.self) { try MetadataPredicate(parsing: nots) }
        let long = "kMDItemFSName == '" + String(repeating: "a", count: 20_000) + "'"
        #expect(throws: MetadataPredicateError.self) { try MetadataPredicate(parsing: long) }
 let nested = "kMDItemFSSize IN " + String(repeating: "{", count: 10_000)
        #expect(throws: MetadataPredicateError.self) { try MetadataPredicate(parsing: nested) }
        let list = "kMDItemFSSize IN {" + (0..<5000).map(String.init).joined(separator: ",") + "}"
        #expect(throws: MetadataPredicateError.self) { try MetadataPredicate(parsing: list) }
    }
}
