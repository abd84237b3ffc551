public import Foundation

/// A query's predicate: Apple's predicate-format syntax (`NSPredicate(format:)` does not work on
/// Linux), parsed and checked against the known attributes, or built in Swift. It evaluates in
/// process and compiles to SQL for the daemon's index.
///
///     MetadataPredicate(format: "%K LIKE[cd] %@", NSMetadataItemFSNameKey, "*.txt")
///     MetadataPredicate(format: "kMDItemFSSize > 1000 AND kMDItemContentTypeTree == 'public.image'")
///     MetadataAttribute.fsName.like("*.txt", [.caseInsensitive]) && MetadataAttribute.fsSize > 1000
///
/// Supported: `==` `=` `!=` `<>` `<` `<=` `>` `>=`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`
/// (`*` and `?`), `MATCHES` (a regular expression), `IN` (a list, or a value in a multi-valued
/// attribute), `BETWEEN {low, high}`, the options `[c]` `[d]` `[cd]`, `ANY`/`ALL`/`NONE` for
/// multi-valued attributes, `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses, `TRUEPREDICATE`,
/// `FALSEPREDICATE`; values as quoted strings, numbers, `YES`/`NO`/`TRUE`/`FALSE`, `nil`,
/// `CAST(seconds, "NSDate")` (since 2001, as Apple's), `{lists}`, and the arguments `%K` `%@`
/// `%d` `%i` `%ld` `%f` `%lf`.
public struct MetadataPredicate: Sendable, Hashable, CustomStringConvertible {
    package indirect enum Node: Sendable, Hashable {
        case constant(Bool)
        case and([Node])
        case or([Node])
        case not(Node)
        case comparison(Comparison)
    }

    /// How a comparison treats text.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The bits, with Apple's values (`NSComparisonPredicate.Options`).
        public let rawValue: UInt
        /// Options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// `[c]`.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`.
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: the strings are already normalized (accepted, as Apple's; comparisons here
        /// normalize anyway).
        public static let normalized = Options(rawValue: 4)
        /// `[w]`, Spotlight's word-based comparison: the value holds a word (split at spaces,
        /// punctuation and lower-to-upper-case changes) that matches the text, or begins with it
        /// (Folio's extension of the format syntax; Spotlight's query strings write it `"text"w`).
        /// A bit Apple's options leave free.
        public static let words = Options(rawValue: 1 << 16)

        /// Whether the options change nothing of a comparison (none, or only `.normalized`).
        package var comparesPlainly: Bool { subtracting(.normalized).isEmpty }
    }

    /// A comparison operator.
    public enum Operator: String, Sendable, Hashable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case matches = "MATCHES"
        case `in` = "IN"
        case between = "BETWEEN"
    }

    /// How a comparison on a multi-valued attribute combines its values.
    package enum Quantifier: String, Sendable, Hashable {
        case any = "ANY"
        case all = "ALL"
        case none = "NONE"
    }

    package struct Comparison: Sendable, Hashable {
        package var attribute: MetadataAttribute
        package var op: Operator
        package var value: MetadataValue
        package var options: Options
        package var quantifier: Quantifier
    }

    package let node: Node

    init(node: Node) {
        self.node = node
    }

    /// Parses Apple's predicate-format syntax, with `arguments` for `%K`, `%@`, `%d` and the like,
    /// as `NSPredicate(format:_:)`: strings, numbers (`Int`, `Double`, `NSNumber`), Booleans, dates
    /// (`Date`, `NSDate`), URLs and arrays of these. A malformed format stops the program with a
    /// message naming the offending token and its offset, as Apple's raises; text a person typed
    /// goes to ``init(parsing:argumentArray:)``, which throws instead.
    public init(format: String, _ arguments: Any...) {
        self.init(format: format, argumentArray: arguments)
    }

    /// Parses Apple's predicate-format syntax with the arguments in an array, as
    /// `NSPredicate(format:argumentArray:)`; a malformed format stops the program, as Apple's
    /// raises.
    public init(format: String, argumentArray arguments: [Any]?) {
        do {
            try self.init(parsing: format, argumentArray: arguments)
        } catch {
            preconditionFailure("MetadataPredicate(format:): \(error)")
        }
    }

    /// Parses predicate-format text that may be malformed (typed by a person, read from a
    /// request): Folio's throwing form of ``init(format:_:)``.
    ///
    /// - Throws: `MetadataPredicateError`, naming the offending token and its offset.
    public init(parsing format: String, argumentArray arguments: [Any]? = nil) throws(MetadataPredicateError) {
        var parser = try MetadataPredicateParser(format: format, arguments: arguments ?? [])
        node = try parser.parse()
    }

    /// Parses Spotlight's query language, as macOS's `NSPredicate(fromMetadataQueryString:)`
    /// does (`kMDItemFSName == "*.pdf"c && kMDItemFSContentChangeDate >= $time.today(-7)`); nil
    /// when the string is not a query. ``init(metadataQueryString:)`` says why.
    public init?(fromMetadataQueryString queryString: String) {
        guard let parsed = try? MetadataPredicate(metadataQueryString: queryString) else { return nil }
        self = parsed
    }

    /// Parses Spotlight's query language: comparisons (`==` `!=` `<` `>` `<=` `>=`) of an
    /// attribute with a string (`*` and `?` wildcards; the modifiers `c`, `d` and `w` after it or
    /// in brackets after the operator), a number or a date (`$time.today(-1)`, `$time.this_week`,
    /// `$time.iso("…")`); `InRange(attribute, low, high)`; `&&`, `||`, `!` and parentheses; `*`
    /// as the attribute for every text attribute. `now` fixes the present for `$time`.
    ///
    /// - Throws: `MetadataPredicateError`, naming the offending token and its offset.
    public init(metadataQueryString queryString: String, now: Date = Date()) throws(MetadataPredicateError) {
        var parser = try MetadataQueryStringParser(queryString, now: now)
        node = try parser.parse()
    }

    /// The predicate that every item satisfies.
    public static let truePredicate = MetadataPredicate(node: .constant(true))
    /// The predicate no item satisfies.
    public static let falsePredicate = MetadataPredicate(node: .constant(false))

    /// The predicate in Apple's format syntax (`NSPredicate.predicateFormat`); parsing it gives
    /// the same predicate back.
    public var predicateFormat: String { Self.format(node, top: true) }

    /// Same as `predicateFormat`.
    public var description: String { predicateFormat }

    private static func format(_ node: Node, top: Bool = false) -> String {
        switch node {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let nodes): return wrap(nodes.map { format($0) }.joined(separator: " AND "), top)
        case .or(let nodes): return wrap(nodes.map { format($0) }.joined(separator: " OR "), top)
        case .not(let inner): return "NOT " + format(inner)
        case .comparison(let comparison):
            var text = comparison.quantifier == .any && comparison.attribute.kind != .strings ? "" : comparison.quantifier.rawValue + " "
            if comparison.attribute.kind == .strings && comparison.quantifier == .any { text = "" }
            text += comparison.attribute.name + " " + comparison.op.rawValue
            return text + comparison.options.formatSuffix + " " + comparison.value.description
        }
    }

    private static func wrap(_ text: String, _ top: Bool) -> String { top ? text : "(" + text + ")" }

    // MARK: Evaluating

    /// Whether an item whose attributes `value(_:)` returns satisfies the predicate.
    public func evaluate(_ value: (MetadataAttribute) -> MetadataValue?) -> Bool {
        Self.evaluate(node, value)
    }

    private static func evaluate(_ node: Node, _ value: (MetadataAttribute) -> MetadataValue?) -> Bool {
        switch node {
        case .constant(let result): return result
        case .and(let nodes): return nodes.allSatisfy { evaluate($0, value) }
        case .or(let nodes): return nodes.contains { evaluate($0, value) }
        case .not(let inner): return !evaluate(inner, value)
        case .comparison(let comparison): return comparison.evaluate(value(comparison.attribute) ?? .null)
        }
    }

    /// The attributes the predicate reads.
    package var attributes: Set<MetadataAttribute> {
        var result = Set<MetadataAttribute>()
        func visit(_ node: Node) {
            switch node {
            case .constant: break
            case .and(let nodes), .or(let nodes): nodes.forEach(visit)
            case .not(let inner): visit(inner)
            case .comparison(let comparison): result.insert(comparison.attribute)
            }
        }
        visit(node)
        return result
    }

    /// The strings the predicate looks for in `kMDItemTextContent` (not those under a NOT): what a
    /// result's content relevance measures.
    package var textSearches: [String] {
        var result: [String] = []
        func visit(_ node: Node) {
            switch node {
            case .constant, .not: break
            case .and(let nodes), .or(let nodes): nodes.forEach(visit)
            case .comparison(let comparison):
                if comparison.attribute == .textContent, case .string(let search) = comparison.value { result.append(search) }
            }
        }
        visit(node)
        return result
    }
}

/// Why a predicate format was refused: what, and where (the offending token and its offset).
public struct MetadataPredicateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var reason: String
    /// The offending token as written.
    public var token: String
    /// Its offset in the format string, in characters.
    public var offset: Int
    /// The whole format string.
    public var format: String

    /// The reason, the token and a caret under it.
    public var description: String {
        let line = format.replacingOccurrences(of: "\n", with: " ")
        return "\(reason) at offset \(offset) (\"\(token)\"):\n  \(line)\n  \(String(repeating: " ", count: offset))^"
    }
}
