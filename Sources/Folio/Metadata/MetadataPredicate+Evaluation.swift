import Foundation
import Synchronization

extension MetadataPredicate.Comparison {
    /// Whether an item's value of the attribute satisfies the comparison.
    func evaluate(_ actual: MetadataValue) -> Bool {
        if attribute == .textContent {
            // Text is searched word by word (``TextWords``), whatever the operator's options.
            guard case .string(let text) = actual, case .string(let search) = value, Self.textOperators.contains(op) else { return false }
            return TextWords.text(text, holds: search)
        }
        guard attribute.kind == .strings else { return holds(actual) }
        let values: [MetadataValue]
        switch actual {
        case .array(let items): values = items
        case .null: values = []
        default: values = [actual]
        }
        switch quantifier {
        case .any: return values.contains { holds($0) }
        case .all: return values.allSatisfy { holds($0) }
        case .none: return !values.contains { holds($0) }
        }
    }

    /// The operators a search of the text takes.
    package static let textOperators: Set<MetadataPredicate.Operator> = [.equal, .like, .contains, .beginsWith]

    private func holds(_ actual: MetadataValue) -> Bool {
        switch op {
        case .in:
            guard case .array(let candidates) = value else { return false }
            return candidates.contains { Self.compare(actual, .equal, $0, options) }
        case .between:
            guard case .array(let bounds) = value, bounds.count == 2 else { return false }
            return Self.compare(actual, .greaterOrEqual, bounds[0], options) && Self.compare(actual, .lessOrEqual, bounds[1], options)
        default:
            return Self.compare(actual, op, value, options)
        }
    }

    static func compare(_ lhs: MetadataValue, _ op: MetadataPredicate.Operator, _ rhs: MetadataValue, _ options: MetadataPredicate.Options) -> Bool {
        if lhs == .null || rhs == .null {
            switch op {
            case .equal: return lhs == rhs
            case .notEqual: return lhs != rhs
            default: return false
            }
        }
        if case .string(let left) = lhs, case .string(let right) = rhs {
            if options.contains(.words), op == .equal || op == .like {
                // Word by word: a word that matches, or (without wildcards) begins with the text.
                let pattern = WildcardPattern(fold(right, options) + (op == .equal ? "*" : ""), literal: op == .equal)
                return words(of: left).contains { pattern.matches(fold($0, options)) }
            }
            let a = fold(left, options), b = fold(right, options)
            if let ordered = order(a, op, b) { return ordered }
            switch op {
            case .beginsWith: return a.hasPrefix(b)
            case .endsWith: return a.hasSuffix(b)
            case .contains: return b.isEmpty || a.contains(b)
            case .like: return WildcardPattern(b).matches(a)
            case .matches: return RegexCache.shared.matches(left, pattern: right, options: options)
            default: return false
            }
        }
        guard let a = lhs.number, let b = rhs.number else { return false }
        return order(a, op, b) ?? false
    }

    /// The six orderings, for any comparable values; nil for the other operators.
    private static func order<T: Comparable>(_ a: T, _ op: MetadataPredicate.Operator, _ b: T) -> Bool? {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        default: nil
        }
    }

    /// The words of `text` as Spotlight's word-based comparison splits it: at anything that is
    /// not a letter or a digit, and where a lower-case letter is followed by an upper-case one
    /// ("MyWindow": "My", "Window").
    static func words(of text: String) -> [String] {
        var words: [String] = []
        var word = ""
        var previousLower = false
        for character in text {
            guard character.isLetter || character.isNumber else {
                if !word.isEmpty { words.append(word) }
                word = ""
                previousLower = false
                continue
            }
            if previousLower, character.isUppercase, !word.isEmpty {
                words.append(word)
                word = ""
            }
            word.append(character)
            previousLower = character.isLowercase
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    /// Text as the options compare it.
    static func fold(_ text: String, _ options: MetadataPredicate.Options) -> String {
        guard !options.comparesPlainly else { return text }
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return text.folding(options: folding, locale: nil)
    }
}

/// `LIKE` patterns: `*` any run of characters, `?` one character, `\` before a character makes it
/// literal (`\*`, `\?`, `\\`), everything else literal.
struct WildcardPattern {
    private enum Token: Equatable {
        case character(Character)
        case one
        case any
    }

    private let tokens: [Token]

    /// - Parameter literal: the pattern is text matched as a prefix: every character literal but
    ///   a last `*`, which is the wildcard.
    init(_ pattern: String, literal: Bool = false) {
        var tokens: [Token] = []
        if literal {
            tokens = pattern.map { .character($0) }
            if pattern.last == "*" { tokens[tokens.count - 1] = .any }
        } else {
            var escaped = false
            for character in pattern {
                if escaped {
                    tokens.append(.character(character))
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else {
                    tokens.append(character == "*" ? .any : character == "?" ? .one : .character(character))
                }
            }
            // A backslash at the end stands for itself.
            if escaped { tokens.append(.character("\\")) }
        }
        self.tokens = tokens
    }

    func matches(_ text: String) -> Bool {
        let characters = Array(text)
        var t = 0, p = 0
        var starP = -1, starT = 0
        while t < characters.count {
            if p < tokens.count, tokens[p] == .one || tokens[p] == .character(characters[t]) {
                t += 1
                p += 1
            } else if p < tokens.count, tokens[p] == .any {
                starP = p
                starT = t
                p += 1
            } else if starP >= 0 {
                p = starP + 1
                starT += 1
                t = starT
            } else {
                return false
            }
        }
        while p < tokens.count, tokens[p] == .any { p += 1 }
        return p == tokens.count
    }
}

/// Compiled `MATCHES` expressions, shared (a query evaluates the same few over many items).
final class RegexCache: Sendable {
    static let shared = RegexCache()
    private let cache = Mutex<[String: NSRegularExpression?]>([:])

    func matches(_ text: String, pattern: String, options: MetadataPredicate.Options) -> Bool {
        let key = "\(options.rawValue)/\(pattern)"
        let expression = cache.withLock { cache -> NSRegularExpression? in
            if let found = cache[key] { return found }
            if cache.count > 256 { cache.removeAll() }
            var flags: NSRegularExpression.Options = []
            if options.contains(.caseInsensitive) { flags.insert(.caseInsensitive) }
            let compiled = try? NSRegularExpression(pattern: "^(?:" + pattern + ")$", options: flags)
            cache[key] = compiled
            return compiled
        }
        guard let expression else { return false }
        let subject = options.contains(.diacriticInsensitive) ? MetadataPredicate.Comparison.fold(text, [.diacriticInsensitive]) : text
        return expression.firstMatch(in: subject, range: NSRange(subject.startIndex..., in: subject)) != nil
    }
}
