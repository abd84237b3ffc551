import Folio
import GRDB

/// Compiles a `MetadataPredicate` to an SQL condition on the `items` table that every matching row
/// satisfies. Where SQL can say exactly what the predicate says (numbers, dates, types, tags), the
/// condition is exact; where it cannot (Unicode case and diacritic folding, wildcards, regular
/// expressions), it narrows by the folded name and its trigram index, or not at all. The query then
/// evaluates the predicate itself on the rows the condition let through, so the results are those
/// of the in-process evaluation, whatever the SQL could express.
struct PredicateCompiler {
    /// The SQL, its arguments, and whether it is exactly the predicate (only exact conditions may
    /// be negated).
    struct Clause {
        var sql: String
        var arguments: [(any DatabaseValueConvertible)?]
        var exact: Bool
    }

    /// The type identifiers in the index whose conformance tree contains the given one.
    let typesConforming: (String) -> [String]

    /// The condition; nil when nothing narrows the rows.
    func compile(_ predicate: MetadataPredicate) -> Clause? { compile(predicate.node) }

    private func compile(_ node: MetadataPredicate.Node) -> Clause? {
        switch node {
        case .constant(let value): return Clause(sql: value ? "1" : "0", arguments: [], exact: true)
        case .and(let nodes):
            let parts = nodes.map(compile)
            let present = parts.compactMap { $0 }
            guard !present.isEmpty else { return nil }
            return Clause(
                sql: present.map { "(\($0.sql))" }.joined(separator: " AND "), arguments: present.flatMap(\.arguments),
                exact: present.count == parts.count && present.allSatisfy(\.exact))
        case .or(let nodes):
            var present: [Clause] = []
            for node in nodes {
                guard let clause = compile(node) else { return nil }
                present.append(clause)
            }
            return Clause(
                sql: present.map { "(\($0.sql))" }.joined(separator: " OR "), arguments: present.flatMap(\.arguments),
                exact: present.allSatisfy(\.exact))
        case .not(let inner):
            guard let clause = compile(inner), clause.exact else { return nil }
            return Clause(sql: "NOT (\(clause.sql))", arguments: clause.arguments, exact: true)
        case .comparison(let comparison):
            return compile(comparison)
        }
    }

    private func compile(_ comparison: MetadataPredicate.Comparison) -> Clause? {
        switch comparison.attribute {
        case .fsName, .displayName: return name(comparison)
        case .path, .url: return path(comparison)
        case .fsSize: return number("size", nullable: false, comparison)
        case .fsContentChangeDate, .fsCreationDate: return number("modified", nullable: false, comparison)
        case .lastUsedDate: return number("last_used", nullable: true, comparison)
        case .favoriteRank: return number("favorite_rank", nullable: true, comparison)
        case .contentType: return contentType(comparison)
        case .contentTypeTree: return typeTree(comparison)
        case .userTags: return tags(comparison)
        case .textContent: return textContent(comparison)
        default: return nil
        }
    }

    // MARK: Numbers and dates

    /// Exact, with the in-process rules: a missing value equals only nil and differs from anything
    /// else; a constant that is not a number matches nothing.
    private func number(_ column: String, nullable: Bool, _ comparison: MetadataPredicate.Comparison) -> Clause? {
        let value = comparison.value
        if value == .null {
            switch comparison.op {
            case .equal: return Clause(sql: "\(column) IS NULL", arguments: [], exact: true)
            case .notEqual: return Clause(sql: "\(column) IS NOT NULL", arguments: [], exact: true)
            default: return Clause(sql: "0", arguments: [], exact: true)
            }
        }
        let guarded = { (sql: String) in nullable ? "IFNULL(\(sql), 0)" : sql }
        switch comparison.op {
        case .equal, .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let number = value.number else { return Clause(sql: "0", arguments: [], exact: true) }
            return Clause(sql: guarded("\(column) \(comparison.op.rawValue) ?"), arguments: [number], exact: true)
        case .notEqual:
            guard let number = value.number else { return Clause(sql: "0", arguments: [], exact: true) }
            return Clause(sql: nullable ? "(\(column) IS NULL OR \(column) != ?)" : "\(column) != ?", arguments: [number], exact: true)
        case .between:
            guard case .array(let bounds) = value, bounds.count == 2, let low = bounds[0].number, let high = bounds[1].number else {
                return Clause(sql: "0", arguments: [], exact: true)
            }
            return Clause(sql: guarded("\(column) BETWEEN ? AND ?"), arguments: [low, high], exact: true)
        case .in:
            guard case .array(let candidates) = value else { return Clause(sql: "0", arguments: [], exact: true) }
            let numbers = candidates.compactMap(\.number)
            guard !numbers.isEmpty else { return Clause(sql: "0", arguments: [], exact: true) }
            return Clause(
                sql: guarded("\(column) IN (\(Array(repeating: "?", count: numbers.count).joined(separator: ", ")))"), arguments: numbers,
                exact: true)
        default:
            return nil
        }
    }

    // MARK: Names

    /// Narrows by the folded name (a match in any mode is a match folded); never exact.
    private func name(_ comparison: MetadataPredicate.Comparison) -> Clause? {
        if comparison.options.contains(.words) {
            // A word that matches holds the text's longest literal run: the name does too.
            guard case .string(let text) = comparison.value else { return nil }
            let folded = MetadataFacts.searchFold(text)
            let runs = comparison.op == .like ? folded.split(whereSeparator: { $0 == "*" || $0 == "?" }).map(String.init) : [folded]
            guard let longest = runs.max(by: { $0.count < $1.count }), !longest.isEmpty else { return nil }
            return Self.like([.any, .text(longest), .any], literal: longest)
        }
        guard case .string(let text) = comparison.value else {
            if comparison.op == .in, case .array(let values) = comparison.value {
                let strings = values.compactMap(\.string).map(MetadataFacts.searchFold)
                guard !strings.isEmpty else { return nil }
                return Clause(sql: "fold IN (\(Array(repeating: "?", count: strings.count).joined(separator: ", ")))", arguments: strings, exact: false)
            }
            return nil
        }
        let folded = MetadataFacts.searchFold(text)
        switch comparison.op {
        case .equal: return Clause(sql: "fold = ?", arguments: [folded], exact: false)
        case .beginsWith: return Self.like([.text(folded), .any], literal: folded)
        case .endsWith: return Self.like([.any, .text(folded)], literal: folded)
        case .contains: return folded.isEmpty ? nil : Self.like([.any, .text(folded), .any], literal: folded)
        case .like:
            // `?` is one character to Swift and may be several code points to SQLite: any run.
            var parts: [LikePart] = [], longest = "", run = ""
            var escaped = false
            for character in folded {
                if escaped {
                    run.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "*" || character == "?" {
                    if !run.isEmpty { parts.append(.text(run)) }
                    parts.append(.any)
                    if run.count > longest.count { longest = run }
                    run = ""
                } else {
                    run.append(character)
                }
            }
            if escaped { run.append("\\") }
            if !run.isEmpty { parts.append(.text(run)) }
            if run.count > longest.count { longest = run }
            return Self.like(parts, literal: longest)
        default:
            return nil
        }
    }

    /// A piece of a `LIKE` pattern: literal text, or any run of characters.
    enum LikePart {
        case text(String)
        case any
    }

    /// A `LIKE` on the folded name. With a literal run of at least three characters (the trigram
    /// tokenizer needs three) the names' trigram index gives the rows holding every trigram of
    /// `literal` (its longest run), a superset the query checks; otherwise it scans `fold` with the
    /// wildcards escaped.
    static func like(_ parts: [LikePart], literal: String) -> Clause {
        if let query = MetadataIndex.substringQuery(literal) {
            return Clause(sql: "id IN (SELECT rowid FROM items_fts WHERE items_fts MATCH ?)", arguments: [query], exact: false)
        }
        let pattern = parts.map { part in if case .text(let text) = part { escapeLike(text) } else { "%" } }.joined()
        return Clause(sql: "fold LIKE ? ESCAPE '\\'", arguments: [pattern], exact: false)
    }

    static func escapeLike(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    // MARK: Paths and types

    private func path(_ comparison: MetadataPredicate.Comparison) -> Clause? {
        guard comparison.options.comparesPlainly, case .string(let text) = comparison.value else { return nil }
        switch comparison.op {
        case .equal: return Clause(sql: "path = ?", arguments: [text], exact: false)
        case .beginsWith: return Clause(sql: "path GLOB ?", arguments: [Self.escapeGlob(text) + "*"], exact: false)
        default: return nil
        }
    }

    static func escapeGlob(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "*": escaped += "[*]"
            case "?": escaped += "[?]"
            case "[": escaped += "[[]"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Type identifiers are ASCII (dynamic ones too), where SQL's byte comparison is Swift's:
    /// exact then, and negatable.
    private func contentType(_ comparison: MetadataPredicate.Comparison) -> Clause? {
        guard comparison.options.comparesPlainly else { return nil }
        switch (comparison.op, comparison.value) {
        case (.equal, .string(let type)): return Clause(sql: "type = ?", arguments: [type], exact: type.utf8.allSatisfy { $0 < 0x80 })
        case (.notEqual, .string(let type)): return Clause(sql: "type != ?", arguments: [type], exact: type.utf8.allSatisfy { $0 < 0x80 })
        case (.in, .array(let values)):
            let types = values.compactMap(\.string)
            guard !types.isEmpty else { return nil }
            return Clause(sql: "type IN (\(Array(repeating: "?", count: types.count).joined(separator: ", ")))", arguments: types, exact: false)
        default: return nil
        }
    }

    /// `ANY kMDItemContentTypeTree == T`: the rows whose type conforms to T, as the types in the
    /// index that do.
    private func typeTree(_ comparison: MetadataPredicate.Comparison) -> Clause? {
        guard comparison.options.comparesPlainly, comparison.quantifier == .any else { return nil }
        var wanted: [String]
        switch (comparison.op, comparison.value) {
        case (.equal, .string(let type)): wanted = [type]
        case (.in, .array(let values)): wanted = values.compactMap(\.string)
        default: return nil
        }
        var types = Set<String>()
        for type in wanted { types.formUnion(typesConforming(type)) }
        guard !types.isEmpty else { return Clause(sql: "0", arguments: [], exact: false) }
        let sorted = types.sorted()
        return Clause(sql: "type IN (\(Array(repeating: "?", count: sorted.count).joined(separator: ", ")))", arguments: sorted, exact: false)
    }

    /// The text's words, from the content index: exactly the in-process rule (``TextWords``).
    private func textContent(_ comparison: MetadataPredicate.Comparison) -> Clause? {
        guard case .string(let search) = comparison.value, MetadataPredicate.Comparison.textOperators.contains(comparison.op),
            let query = TextWords.ftsQuery(search)
        else { return Clause(sql: "0", arguments: [], exact: true) }
        return Clause(sql: "id IN (SELECT rowid FROM contents WHERE contents MATCH ?)", arguments: [query], exact: true)
    }

    private func tags(_ comparison: MetadataPredicate.Comparison) -> Clause? {
        guard comparison.quantifier == .any else { return nil }
        if comparison.options.comparesPlainly, comparison.op == .equal, case .string(let tag) = comparison.value, !tag.contains("\n") {
            return Clause(sql: "instr(tags, ?) > 0", arguments: ["\n" + tag + "\n"], exact: false)
        }
        // Any comparison that holds for one of the tags needs a tag.
        return Clause(sql: "tags IS NOT NULL", arguments: [], exact: false)
    }
}
