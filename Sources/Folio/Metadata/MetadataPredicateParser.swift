import Foundation

/// Reads Apple's predicate-format syntax into a checked `MetadataPredicate.Node`. Every refusal
/// names the offending token and its offset.
struct MetadataPredicateParser {
    typealias Node = MetadataPredicate.Node

    struct Token {
        enum Kind: Equatable {
            case word(String)  // identifiers and keywords
            case string(String)
            case number(MetadataValue)
            case symbol(String)
            case argument(String)  // K, @, d, i, ld, f, …
            case end
        }
        var kind: Kind
        var text: String
        var offset: Int

        /// The keyword, uppercased, when the token is a word.
        var keyword: String? {
            if case .word(let word) = kind { return word.uppercased() }
            return nil
        }
    }

    /// The longest format accepted, and the deepest nesting.
    static let maximumLength = 16 << 10
    static let maximumDepth = 64

    let format: String
    private var tokens: [Token] = []
    private var position = 0
    private let arguments: [Any]
    private var nextArgument = 0
    private var depth = 0

    init(format: String, arguments: [Any]) throws(MetadataPredicateError) {
        self.format = format
        self.arguments = arguments
        guard format.count <= Self.maximumLength else {
            throw MetadataPredicateError(reason: "the predicate is longer than \(Self.maximumLength) characters", token: "", offset: 0, format: "")
        }
        tokens = try Self.lex(format)
    }

    private func error(_ reason: String, _ token: Token) -> MetadataPredicateError {
        MetadataPredicateError(reason: reason, token: token.kind == .end ? "end of the predicate" : token.text, offset: token.offset, format: format)
    }

    // MARK: Lexing

    static func lex(_ format: String) throws(MetadataPredicateError) -> [Token] {
        let characters = Array(format)
        var tokens: [Token] = []
        var index = 0
        func fail(_ reason: String, _ start: Int, _ end: Int) -> MetadataPredicateError {
            MetadataPredicateError(reason: reason, token: String(characters[start..<min(end, characters.count)]), offset: start, format: format)
        }
        while index < characters.count {
            let start = index
            let character = characters[index]
            if character.isWhitespace {
                index += 1
                continue
            }
            if character == "\"" || character == "'" {
                var text = ""
                index += 1
                var closed = false
                while index < characters.count {
                    let next = characters[index]
                    if next == character {
                        closed = true
                        index += 1
                        break
                    }
                    if next == "\\" {
                        guard index + 1 < characters.count else { break }
                        let escaped = characters[index + 1]
                        switch escaped {
                        case "n": text.append("\n")
                        case "t": text.append("\t")
                        case "r": text.append("\r")
                        case "0": text.append("\0")
                        default: text.append(escaped)
                        }
                        index += 2
                        continue
                    }
                    text.append(next)
                    index += 1
                }
                guard closed else { throw fail("a string that is never closed", start, characters.count) }
                tokens.append(Token(kind: .string(text), text: String(characters[start..<index]), offset: start))
                continue
            }
            if character.isASCII && character.isNumber || (character == "." && index + 1 < characters.count && characters[index + 1].isASCII && characters[index + 1].isNumber) {
                while index < characters.count, characters[index].isASCII, characters[index].isNumber || characters[index] == "." { index += 1 }
                if index < characters.count, characters[index] == "e" || characters[index] == "E" {
                    var end = index + 1
                    if end < characters.count, characters[end] == "+" || characters[end] == "-" { end += 1 }
                    if end < characters.count, characters[end].isASCII, characters[end].isNumber {
                        index = end
                        while index < characters.count, characters[index].isASCII, characters[index].isNumber { index += 1 }
                    }
                }
                let text = String(characters[start..<index])
                if let integer = Int64(text) {
                    tokens.append(Token(kind: .number(.integer(integer)), text: text, offset: start))
                } else if let double = Double(text), double.isFinite {
                    tokens.append(Token(kind: .number(.double(double)), text: text, offset: start))
                } else {
                    throw fail("not a number", start, index)
                }
                continue
            }
            if character.isLetter || character == "_" || character == "$" || character == "#" {
                index += 1
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_"
                    || characters[index] == "." || characters[index] == "$"
                {
                    index += 1
                }
                let text = String(characters[start..<index])
                if text.hasPrefix("$") { throw fail("variables ($name) are not supported", start, index) }
                tokens.append(Token(kind: .word(text), text: text, offset: start))
                continue
            }
            if character == "%" {
                index += 1
                var spec = ""
                while index < characters.count, spec.count < 4, "lhqzj".contains(characters[index]) {
                    spec.append(characters[index])
                    index += 1
                }
                guard index < characters.count, "K@difuxXsgeDUO".contains(characters[index]) else {
                    throw fail("an unknown format argument", start, index + 1)
                }
                spec.append(characters[index])
                index += 1
                tokens.append(Token(kind: .argument(spec), text: String(characters[start..<index]), offset: start))
                continue
            }
            let two = index + 1 < characters.count ? String(characters[index...index + 1]) : ""
            if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) {
                tokens.append(Token(kind: .symbol(two), text: two, offset: start))
                index += 2
                continue
            }
            if "=<>!(){},[]-".contains(character) {
                tokens.append(Token(kind: .symbol(String(character)), text: String(character), offset: start))
                index += 1
                continue
            }
            throw fail("an unexpected character", start, start + 1)
        }
        tokens.append(Token(kind: .end, text: "", offset: characters.count))
        return tokens
    }

    // MARK: Parsing

    private var current: Token { tokens[position] }

    private mutating func advance() -> Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    private mutating func expect(_ symbol: String, _ what: String) throws(MetadataPredicateError) {
        guard isSymbol(symbol) else { throw error("expected \(what)", current) }
        _ = advance()
    }

    mutating func parse() throws(MetadataPredicateError) -> Node {
        guard current.kind != .end else { throw error("the predicate is empty", current) }
        let node = try parseOr()
        guard current.kind == .end else { throw error("expected AND, OR or the end", current) }
        return node
    }

    private mutating func parseOr() throws(MetadataPredicateError) -> Node {
        var nodes = [try parseAnd()]
        while current.keyword == "OR" || isSymbol("||") {
            _ = advance()
            nodes.append(try parseAnd())
        }
        return nodes.count == 1 ? nodes[0] : .or(nodes)
    }

    private mutating func parseAnd() throws(MetadataPredicateError) -> Node {
        var nodes = [try parseNot()]
        while current.keyword == "AND" || isSymbol("&&") {
            _ = advance()
            nodes.append(try parseNot())
        }
        return nodes.count == 1 ? nodes[0] : .and(nodes)
    }

    private mutating func parseNot() throws(MetadataPredicateError) -> Node {
        if current.keyword == "NOT" || isSymbol("!") {
            let token = advance()
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) deep", token) }
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws(MetadataPredicateError) -> Node {
        if isSymbol("(") {
            let open = advance()
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) deep", open) }
            let node = try parseOr()
            guard isSymbol(")") else { throw error("expected ) to close the ( at offset \(open.offset)", current) }
            _ = advance()
            return node
        }
        switch current.keyword {
        case "TRUEPREDICATE":
            _ = advance()
            return .constant(true)
        case "FALSEPREDICATE":
            _ = advance()
            return .constant(false)
        default:
            return try parseComparison()
        }
    }

    private enum Operand {
        case attribute(MetadataAttribute)
        case value(MetadataValue)
    }

    private mutating func parseComparison() throws(MetadataPredicateError) -> Node {
        var quantifier: MetadataPredicate.Quantifier?
        var quantifierToken: Token?
        switch current.keyword {
        case "ANY", "SOME": quantifier = .any
        case "ALL": quantifier = .all
        case "NONE": quantifier = MetadataPredicate.Quantifier.none
        default: break
        }
        if quantifier != nil { quantifierToken = advance() }
        let leftToken = current
        let left = try parseOperand()
        let opToken = current
        let (op, negated) = try parseOperator()
        let options = try parseOptions()
        let rightToken = current
        let right = try parseOperand()

        var comparison: MetadataPredicate.Comparison
        switch (left, right) {
        case (.attribute(let attribute), .value(let value)):
            comparison = .init(attribute: attribute, op: op, value: value, options: options, quantifier: quantifier ?? .any)
        case (.value(let value), .attribute(let attribute)):
            // `'tag' IN kMDItemUserTags`, or a constant on the left of an ordering.
            if op == .in {
                guard attribute.kind == .strings else { throw error("IN needs a list on its right, or a multi-valued attribute", rightToken) }
                comparison = .init(attribute: attribute, op: .equal, value: value, options: options, quantifier: .any)
            } else if let flipped = Self.flipped(op) {
                comparison = .init(attribute: attribute, op: flipped, value: value, options: options, quantifier: quantifier ?? .any)
            } else {
                throw error("\(op.rawValue) needs the attribute on its left", opToken)
            }
        case (.attribute, .attribute):
            throw error("comparing two attributes is not supported; compare an attribute with a value", rightToken)
        case (.value, .value):
            throw error("a comparison needs an attribute (kMDItemFSName, %K …)", leftToken)
        }
        if let quantifierToken, comparison.attribute.kind != .strings {
            throw error("\(quantifierToken.text) applies only to multi-valued attributes (kMDItemContentTypeTree, kMDItemUserTags)", quantifierToken)
        }
        try check(comparison, opToken: opToken, valueToken: rightToken)
        let node = Node.comparison(comparison)
        return negated ? .not(node) : node
    }

    /// The operator with its sides swapped (`5 < x` is `x > 5`), for those that have one.
    private static func flipped(_ op: MetadataPredicate.Operator) -> MetadataPredicate.Operator? {
        switch op {
        case .equal, .notEqual: op
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: nil
        }
    }

    private mutating func parseOperator() throws(MetadataPredicateError) -> (MetadataPredicate.Operator, negated: Bool) {
        let token = current
        switch token.kind {
        case .symbol(let symbol):
            let op: MetadataPredicate.Operator?
            switch symbol {
            case "==", "=": op = .equal
            case "!=", "<>": op = .notEqual
            case "<": op = .less
            case "<=", "=<": op = .lessOrEqual
            case ">": op = .greater
            case ">=", "=>": op = .greaterOrEqual
            default: op = nil
            }
            guard let op else { break }
            _ = advance()
            return (op, false)
        case .word:
            let op: MetadataPredicate.Operator?
            switch token.keyword {
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "LIKE": op = .like
            case "MATCHES": op = .matches
            case "IN": op = .in
            case "BETWEEN": op = .between
            default: op = nil
            }
            guard let op else { break }
            _ = advance()
            return (op, false)
        default: break
        }
        throw error("expected a comparison operator (==, !=, <, >, BEGINSWITH, CONTAINS, LIKE, IN …)", token)
    }

    private mutating func parseOptions() throws(MetadataPredicateError) -> MetadataPredicate.Options {
        guard isSymbol("[") else { return [] }
        _ = advance()
        let token = advance()
        var options: MetadataPredicate.Options = []
        guard case .word(let letters) = token.kind else { throw error("expected options such as [c], [d] or [cd]", token) }
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "w": options.insert(.words)
            case "n": options.insert(.normalized)  // already normalized: nothing to do here
            case "l": break  // locale: nothing to do here
            default: throw error("unknown option '\(letter)': use c (case), d (diacritics) or w (words)", token)
            }
        }
        try expect("]", "] to close the options")
        return options
    }

    private mutating func parseOperand() throws(MetadataPredicateError) -> Operand {
        let token = current
        switch token.kind {
        case .word(let word):
            switch word.uppercased() {
            case "YES", "TRUE":
                _ = advance()
                return .value(.bool(true))
            case "NO", "FALSE":
                _ = advance()
                return .value(.bool(false))
            case "NIL", "NULL":
                _ = advance()
                return .value(.null)
            case "CAST":
                return .value(try parseCast())
            case "AND", "OR", "NOT", "IN", "LIKE", "BEGINSWITH", "ENDSWITH", "CONTAINS", "MATCHES", "BETWEEN", "ANY", "ALL", "NONE", "SOME":
                throw error("expected an attribute or a value, found the keyword \(word)", token)
            default:
                _ = advance()
                guard let attribute = MetadataAttribute.named(word) else { throw error("unknown attribute \(word)", token) }
                return .attribute(attribute)
            }
        case .argument(let spec):
            _ = advance()
            guard nextArgument < arguments.count else { throw error("there are fewer arguments than format specifiers", token) }
            let argument = arguments[nextArgument]
            nextArgument += 1
            if spec == "K" {
                guard let name = (argument as? String) ?? (argument as? NSString).map({ $0 as String }) else {
                    throw error("%K needs an attribute name (a string)", token)
                }
                guard let attribute = MetadataAttribute.named(name) else { throw error("unknown attribute \(name)", token) }
                return .attribute(attribute)
            }
            guard let value = MetadataValue(argument: argument) else {
                throw error("an argument of a kind predicates cannot hold (\(type(of: argument)))", token)
            }
            return .value(value)
        default:
            return .value(try parseValue())
        }
    }

    private mutating func parseValue() throws(MetadataPredicateError) -> MetadataValue {
        let token = current
        switch token.kind {
        case .string(let text):
            _ = advance()
            return .string(text)
        case .number(let number):
            _ = advance()
            return number
        case .symbol("-"):
            _ = advance()
            guard case .number(let number) = current.kind else { throw error("expected a number after -", current) }
            _ = advance()
            switch number {
            case .integer(let value): return .integer(-value)
            case .double(let value): return .double(-value)
            default: return number
            }
        case .symbol("{"):
            _ = advance()
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) deep", token) }
            var values: [MetadataValue] = []
            if !isSymbol("}") {
                while true {
                    guard values.count < 4096 else { throw error("a list of more than 4096 values", current) }
                    switch try parseOperand() {
                    case .value(let value): values.append(value)
                    case .attribute: throw error("a list holds values, not attributes", token)
                    }
                    if isSymbol("}") { break }
                    try expect(",", ", or } in the list")
                }
            }
            _ = advance()
            return .array(values)
        case .word, .argument:
            switch try parseOperand() {
            case .value(let value): return value
            case .attribute: throw error("expected a value", token)
            }
        default:
            throw error("expected a value", token)
        }
    }

    /// `CAST(seconds since 2001, "NSDate")`, as `NSPredicate` writes dates.
    private mutating func parseCast() throws(MetadataPredicateError) -> MetadataValue {
        let cast = advance()
        try expect("(", "( after CAST")
        let numberToken = current
        let value = try parseValue()
        try expect(",", ", then the type in CAST")
        let typeToken = advance()
        guard case .string(let type) = typeToken.kind, type == "NSDate" else { throw error("CAST supports only \"NSDate\"", typeToken) }
        try expect(")", ") to close CAST")
        guard let seconds = value.number, value.string == nil else { throw error("CAST to NSDate needs a number of seconds", numberToken) }
        _ = cast
        return .date(Date(timeIntervalSinceReferenceDate: seconds))
    }

    // MARK: Checking

    private func check(_ comparison: MetadataPredicate.Comparison, opToken: Token, valueToken: Token) throws(MetadataPredicateError) {
        let attribute = comparison.attribute
        let op = comparison.op
        let textual: Set<MetadataPredicate.Operator> = [.beginsWith, .endsWith, .contains, .like, .matches]
        let isText = attribute.kind == .string || attribute.kind == .strings
        if textual.contains(op) && !isText {
            throw error("\(op.rawValue) compares text, but \(attribute.name) is not text", opToken)
        }
        if !comparison.options.comparesPlainly && !isText {
            throw error("[c] and [d] apply to text, but \(attribute.name) is not text", opToken)
        }
        func fits(_ value: MetadataValue) -> Bool {
            switch (attribute.kind, value) {
            case (_, .null): return op == .equal || op == .notEqual
            case (.string, .string), (.strings, .string): return true
            case (.number, .integer), (.number, .double): return true
            case (.date, .date): return true
            case (.bool, .bool): return true
            case (.bool, .integer(let number)): return number == 0 || number == 1
            default: return false
            }
        }
        let kindName: String
        switch attribute.kind {
        case .string, .strings: kindName = "text"
        case .number: kindName = "a number"
        case .date: kindName = "a date (CAST(seconds, \"NSDate\") or a Date argument)"
        case .bool: kindName = "YES or NO"
        }
        switch op {
        case .in:
            guard case .array(let values) = comparison.value else { throw error("IN needs a list such as {\"a\", \"b\"}", valueToken) }
            guard values.allSatisfy(fits) else { throw error("\(attribute.name) holds \(kindName); the list does not", valueToken) }
        case .between:
            guard case .array(let values) = comparison.value, values.count == 2 else { throw error("BETWEEN needs {low, high}", valueToken) }
            guard values.allSatisfy(fits), values[0] != .null else { throw error("\(attribute.name) holds \(kindName)", valueToken) }
        default:
            guard fits(comparison.value) else { throw error("\(attribute.name) holds \(kindName)", valueToken) }
        }
        if op == .matches, case .string(let pattern) = comparison.value, (try? NSRegularExpression(pattern: pattern)) == nil {
            throw error("not a valid regular expression", valueToken)
        }
    }
}
