import Foundation

/// Reads Spotlight's query language (`mdfind`'s, and macOS's `NSPredicate(fromMetadataQueryString:)`)
/// into a checked `MetadataPredicate.Node`:
///
///     kMDItemFSName == "*.pdf"c && kMDItemFSSize > 100000
///     (kMDItemFSName == "report"wcd || kMDItemTextContent == "budget"cd) && kMDItemFSContentChangeDate >= $time.this_week(-1)
///     InRange(kMDItemFSSize, 1000, 2000)
///
/// Comparisons are `==` `!=` `<` `>` `<=` `>=` and `InRange(attribute, low, high)`, joined by `&&`
/// and `||`, grouped in parentheses, negated by `!`. A string value is matched whole; `*` matches
/// any run of characters and `?` one (`\*` and `\?` are themselves). Modifiers follow the string
/// (`"x"cd`) or the operator (`==[cd]`): `c` ignores case, `d` diacritics, `w` compares word by
/// word — the value holds a word (split at spaces, punctuation and lower-to-upper-case changes)
/// that begins with the text. `*` as the attribute is any text attribute. Numbers are decimal,
/// with a fraction or an exponent, or hexadecimal (`0x1F`); a number compared with a date is
/// seconds since 2001 (as Core Foundation's dates). Dates: `$time.now`, `$time.today`,
/// `$time.yesterday`, `$time.this_week`, `$time.this_month`, `$time.this_year`, each with an
/// optional offset in its own unit (`$time.today(-1)`: yesterday's start; `$time.now(-3600)`: an
/// hour ago), and `$time.iso("2026-11-25T10:00:00Z")`.
struct MetadataQueryStringParser {
    typealias Node = MetadataPredicate.Node

    enum Kind: Equatable {
        case word(String)
        case string(String, modifiers: String, wildcards: Bool)
        case number(Double, integer: Int64?)
        case time(String)
        case symbol(String)
        case end
    }

    struct Token {
        var kind: Kind
        var text: String
        var offset: Int
    }

    /// The text attributes `*` stands for.
    static let anyTextAttributes: [MetadataAttribute] = [.fsName, .displayName, .textContent, .userTags]

    let query: String
    private var tokens: [Token] = []
    private var position = 0
    private var depth = 0
    /// Now, for `$time` (fixed per parse, so a query's dates agree).
    private let now: Date
    private let calendar: Calendar

    init(_ query: String, now: Date = Date(), calendar: Calendar = .current) throws(MetadataPredicateError) {
        self.query = query
        self.now = now
        self.calendar = calendar
        guard query.count <= MetadataPredicateParser.maximumLength else {
            throw MetadataPredicateError(reason: "the query is longer than \(MetadataPredicateParser.maximumLength) characters", token: "", offset: 0, format: "")
        }
        tokens = try Self.lex(query)
    }

    private var current: Token { tokens[position] }

    private mutating func advance() -> Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private func error(_ reason: String, _ token: Token) -> MetadataPredicateError {
        MetadataPredicateError(reason: reason, token: token.kind == .end ? "end of the query" : token.text, offset: token.offset, format: query)
    }

    // MARK: Lexing

    static func lex(_ query: String) throws(MetadataPredicateError) -> [Token] {
        let characters = Array(query)
        var tokens: [Token] = []
        var index = 0
        func fail(_ reason: String, _ start: Int, _ end: Int) -> MetadataPredicateError {
            MetadataPredicateError(reason: reason, token: String(characters[start..<min(end, characters.count)]), offset: start, format: query)
        }
        func isWordCharacter(_ character: Character) -> Bool { character.isLetter || character.isNumber || character == "_" }
        while index < characters.count {
            let character = characters[index]
            let start = index
            if character.isWhitespace {
                index += 1
                continue
            }
            if character == "\"" || character == "'" {
                // The text as it is, and as a LIKE pattern (escaped wildcards and backslashes
                // keep their backslash there); which one is used depends on whether the string
                // has a wildcard at all.
                var text = "", pattern = "", wildcards = false
                index += 1
                var closed = false
                while index < characters.count {
                    let next = characters[index]
                    if next == character {
                        closed = true
                        index += 1
                        break
                    }
                    if next == "\\", index + 1 < characters.count {
                        // An escaped quote, backslash or wildcard is itself.
                        let escaped = characters[index + 1]
                        text.append(escaped)
                        if escaped == "*" || escaped == "?" || escaped == "\\" { pattern.append("\\") }
                        pattern.append(escaped)
                        index += 2
                        continue
                    }
                    if next == "*" || next == "?" { wildcards = true }
                    text.append(next)
                    pattern.append(next)
                    index += 1
                }
                guard closed else { throw fail("a string that is never closed", start, characters.count) }
                var modifiers = ""
                while index < characters.count, "cdw".contains(characters[index]) {
                    modifiers.append(characters[index])
                    index += 1
                }
                guard index >= characters.count || !isWordCharacter(characters[index]) else {
                    throw fail("unknown modifier after the string (c, d and w are known)", index, index + 1)
                }
                tokens.append(Token(kind: .string(wildcards ? pattern : text, modifiers: modifiers, wildcards: wildcards), text: String(characters[start..<index]), offset: start))
                continue
            }
            if character == "$" {
                index += 1
                while index < characters.count, isWordCharacter(characters[index]) || characters[index] == "." { index += 1 }
                tokens.append(Token(kind: .time(String(characters[start + 1..<index])), text: String(characters[start..<index]), offset: start))
                continue
            }
            if character.isNumber || (character == "." && index + 1 < characters.count && characters[index + 1].isNumber) {
                while index < characters.count, isWordCharacter(characters[index]) || characters[index] == "." { index += 1 }
                // An exponent's sign belongs to the number.
                while index < characters.count, characters[index] == "-" || characters[index] == "+",
                    let last = characters[index - 1].lowercased().first, last == "e", !String(characters[start..<index]).lowercased().hasPrefix("0x")
                {
                    index += 1
                    while index < characters.count, isWordCharacter(characters[index]) || characters[index] == "." { index += 1 }
                }
                let text = String(characters[start..<index])
                let lower = text.lowercased()
                if lower.hasPrefix("0x"), let value = Int64(lower.dropFirst(2), radix: 16) {
                    tokens.append(Token(kind: .number(Double(value), integer: value), text: text, offset: start))
                } else if let value = Int64(text) {
                    tokens.append(Token(kind: .number(Double(value), integer: value), text: text, offset: start))
                } else if let value = Double(text), value.isFinite {
                    tokens.append(Token(kind: .number(value, integer: nil), text: text, offset: start))
                } else {
                    throw fail("not a number", start, index)
                }
                continue
            }
            if isWordCharacter(character) {
                while index < characters.count, isWordCharacter(characters[index]) || characters[index] == "." { index += 1 }
                tokens.append(Token(kind: .word(String(characters[start..<index])), text: String(characters[start..<index]), offset: start))
                continue
            }
            let pair = index + 1 < characters.count ? String(characters[index...index + 1]) : ""
            if ["==", "!=", "<=", ">=", "&&", "||"].contains(pair) {
                tokens.append(Token(kind: .symbol(pair), text: pair, offset: start))
                index += 2
                continue
            }
            guard "=<>!()[],*-".contains(character) else { throw fail("unexpected character", start, start + 1) }
            tokens.append(Token(kind: .symbol(String(character)), text: String(character), offset: start))
            index += 1
        }
        tokens.append(Token(kind: .end, text: "", offset: characters.count))
        return tokens
    }

    // MARK: Parsing

    mutating func parse() throws(MetadataPredicateError) -> Node {
        guard current.kind != .end else { throw error("the query is empty", current) }
        let node = try parseOr()
        guard current.kind == .end else { throw error("expected && or || or the end of the query", current) }
        return node
    }

    private mutating func parseOr() throws(MetadataPredicateError) -> Node {
        var nodes = [try parseAnd()]
        while current.kind == .symbol("||") {
            _ = advance()
            nodes.append(try parseAnd())
        }
        return nodes.count == 1 ? nodes[0] : .or(nodes)
    }

    private mutating func parseAnd() throws(MetadataPredicateError) -> Node {
        var nodes = [try parseUnary()]
        while current.kind == .symbol("&&") {
            _ = advance()
            nodes.append(try parseUnary())
        }
        return nodes.count == 1 ? nodes[0] : .and(nodes)
    }

    private mutating func parseUnary() throws(MetadataPredicateError) -> Node {
        let token = current
        depth += 1
        defer { depth -= 1 }
        guard depth <= MetadataPredicateParser.maximumDepth else { throw error("nested more than \(MetadataPredicateParser.maximumDepth) deep", token) }
        if token.kind == .symbol("!") {
            _ = advance()
            return .not(try parseUnary())
        }
        if token.kind == .symbol("(") {
            _ = advance()
            let node = try parseOr()
            guard current.kind == .symbol(")") else { throw error("expected ) to close the group", current) }
            _ = advance()
            return node
        }
        if case .word(let word) = token.kind, word.lowercased() == "inrange" {
            return try parseInRange()
        }
        return try parseComparison()
    }

    /// `InRange(attribute, low, high)`: both ends included.
    private mutating func parseInRange() throws(MetadataPredicateError) -> Node {
        _ = advance()
        guard current.kind == .symbol("(") else { throw error("expected ( after InRange", current) }
        _ = advance()
        let attributeToken = current
        let attribute = try parseAttribute()
        guard attribute.count == 1, let only = attribute.first, only.kind == .number || only.kind == .date else {
            throw error("InRange needs a number or date attribute", attributeToken)
        }
        guard current.kind == .symbol(",") else { throw error("expected , after the attribute", current) }
        _ = advance()
        let low = try parseScalar(for: only)
        guard current.kind == .symbol(",") else { throw error("expected , between the ends of the range", current) }
        _ = advance()
        let high = try parseScalar(for: only)
        guard current.kind == .symbol(")") else { throw error("expected ) to close InRange", current) }
        _ = advance()
        return .comparison(.init(attribute: only, op: .between, value: .array([low, high]), options: [], quantifier: .any))
    }

    private mutating func parseComparison() throws(MetadataPredicateError) -> Node {
        let attributes = try parseAttribute()
        let opToken = advance()
        let op: MetadataPredicate.Operator
        var negated = false
        switch opToken.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="):
            op = .equal
            negated = true
        case .symbol("<"): op = .less
        case .symbol(">"): op = .greater
        case .symbol("<="): op = .lessOrEqual
        case .symbol(">="): op = .greaterOrEqual
        default: throw error("expected ==, !=, <, >, <= or >= after the attribute", opToken)
        }
        var modifiers = ""
        if current.kind == .symbol("[") {
            _ = advance()
            while case .word(let word) = current.kind, word.allSatisfy({ "cdw".contains($0) }) {
                modifiers += word
                _ = advance()
            }
            guard current.kind == .symbol("]") else { throw error("expected modifiers (c, d, w) and ]", current) }
            _ = advance()
        }
        let valueToken = current
        var nodes: [Node] = []
        if case .string(let text, let suffix, let wildcards) = valueToken.kind {
            _ = advance()
            modifiers += suffix
            var options: MetadataPredicate.Options = []
            if modifiers.contains("c") { options.insert(.caseInsensitive) }
            if modifiers.contains("d") { options.insert(.diacriticInsensitive) }
            if modifiers.contains("w") { options.insert(.words) }
            for attribute in attributes {
                guard attribute.kind == .string || attribute.kind == .strings else {
                    // A string compared with a date or number: a date as ISO 8601 is allowed.
                    guard attribute.kind == .date, let date = Self.isoDate(text) else {
                        throw error("\(attribute.name) is not text: compare it with a number or a date", valueToken)
                    }
                    nodes.append(.comparison(.init(attribute: attribute, op: op, value: .date(date), options: [], quantifier: .any)))
                    continue
                }
                guard op == .equal else { throw error("<, >, <= and >= compare numbers and dates, not text", opToken) }
                let comparison = MetadataPredicate.Comparison(
                    attribute: attribute, op: wildcards ? .like : .equal, value: .string(text), options: options, quantifier: .any)
                nodes.append(.comparison(comparison))
            }
        } else {
            guard attributes.count == 1, let attribute = attributes.first else { throw error("* compares text: give a string", valueToken) }
            guard modifiers.isEmpty else { throw error("modifiers apply to strings", valueToken) }
            let value = try parseScalar(for: attribute)
            nodes.append(.comparison(.init(attribute: attribute, op: op, value: value, options: [], quantifier: .any)))
        }
        let node = nodes.count == 1 ? nodes[0] : .or(nodes)
        return negated ? .not(node) : node
    }

    /// An attribute name, or `*` for every text attribute.
    private mutating func parseAttribute() throws(MetadataPredicateError) -> [MetadataAttribute] {
        let token = advance()
        if token.kind == .symbol("*") { return Self.anyTextAttributes }
        guard case .word(let name) = token.kind else { throw error("expected an attribute (kMDItemFSName, kMDItemFSSize …) or *", token) }
        guard let attribute = MetadataAttribute.named(name) else { throw error("unknown attribute \(name)", token) }
        return [attribute]
    }

    /// A number or a date for a number or date attribute.
    private mutating func parseScalar(for attribute: MetadataAttribute) throws(MetadataPredicateError) -> MetadataValue {
        var token = advance()
        var sign = 1.0
        if token.kind == .symbol("-") {
            sign = -1
            token = advance()
        }
        switch token.kind {
        case .number(let value, let integer):
            switch attribute.kind {
            case .date: return .date(Date(timeIntervalSinceReferenceDate: sign * value))
            case .number, .bool: return integer.map { .integer(Int64(sign) * $0) } ?? .double(sign * value)
            default: throw error("\(attribute.name) is text: compare it with a string", token)
            }
        case .time(let name) where sign > 0:
            guard attribute.kind == .date else { throw error("\(attribute.name) is not a date", token) }
            return .date(try time(name, token))
        case .word(let word) where sign > 0 && attribute.kind == .bool && ["true", "false", "yes", "no"].contains(word.lowercased()):
            return .bool(["true", "yes"].contains(word.lowercased()))
        case .string(let text, _, _) where attribute.kind == .date && sign > 0:
            guard let date = Self.isoDate(text) else { throw error("not an ISO 8601 date", token) }
            return .date(date)
        default:
            throw error("expected a number or a date ($time.today …)", token)
        }
    }

    /// A `$time` value: the variable, then its offset (`(n)`) or, for `iso`, its date.
    private mutating func time(_ name: String, _ token: Token) throws(MetadataPredicateError) -> Date {
        var argument: Token?
        if current.kind == .symbol("(") {
            _ = advance()
            var sign = ""
            if current.kind == .symbol("-") {
                sign = "-"
                _ = advance()
            }
            argument = advance()
            if !sign.isEmpty, case .number(let value, let integer) = argument?.kind {
                argument?.kind = .number(-value, integer: integer.map { -$0 })
            }
            guard current.kind == .symbol(")") else { throw error("expected ) after the argument of $\(name)", current) }
            _ = advance()
        }
        if name == "time.iso" {
            guard case .string(let text, _, _)? = argument?.kind, let date = Self.isoDate(text) else {
                throw error("$time.iso needs an ISO 8601 date in quotes, e.g. $time.iso(\"2026-11-25T10:00:00Z\")", argument ?? token)
            }
            return date
        }
        var offset = 0.0
        if let argument {
            guard case .number(let value, _) = argument.kind else { throw error("the offset of $\(name) is a number", argument) }
            offset = value
        }
        let units: [String: (Calendar.Component, Calendar.Component?)] = [
            "time.now": (.second, nil), "time.today": (.day, .day), "time.yesterday": (.day, .day), "time.this_week": (.weekOfYear, .weekOfYear),
            "time.this_month": (.month, .month), "time.this_year": (.year, .year),
        ]
        guard let (unit, start) = units[name] else {
            throw error("unknown time variable (now, today, yesterday, this_week, this_month, this_year, iso)", token)
        }
        guard offset.rounded() == offset || unit == .second, abs(offset) < 1e9 else { throw error("the offset of $\(name) is a whole number", argument ?? token) }
        var base = now
        if let start { base = calendar.dateInterval(of: start, for: now)?.start ?? now }
        if name == "time.yesterday" { offset -= 1 }
        if unit == .second { return base.addingTimeInterval(offset) }
        return calendar.date(byAdding: unit, value: Int(offset), to: base) ?? base
    }

    /// An ISO 8601 date: a whole date and time with a zone, or a day (its start, here).
    static func isoDate(_ text: String) -> Date? {
        let full = ISO8601DateFormatter()
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        day.timeZone = TimeZone.current
        return day.date(from: text)
    }
}
