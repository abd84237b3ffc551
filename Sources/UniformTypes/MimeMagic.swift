/// shared-mime-info's compiled `magic` file: prioritised byte-pattern rules for recognising a file's
/// type from its first bytes.
///
/// Format (shared-mime-info spec, "The magic files"): a `MIME-Magic\0\n` header, then sections
/// `[priority:mime/type]\n`, each followed by rule lines
/// `[indent]>offset=<u16 BE length><value>[&<mask>][~word-size][+range-length]\n`. A rule matches if its
/// value (masked) appears at any offset in `offset...offset+range-1`; an indented rule is a condition
/// on the rule above it. A section matches if any top-level rule and one of its children's chains match.
struct MimeMagic: Sendable {
    struct Rule: Sendable {
        var indent: Int
        var offset: Int
        var value: [UInt8]
        var mask: [UInt8]?
        var rangeLength: Int
        var children: [Rule] = []
    }

    struct Section: Sendable {
        var priority: Int
        var mimeType: String
        var rules: [Rule]
    }

    /// Sections, highest priority first.
    private(set) var sections: [Section] = []
    /// How many leading bytes of a file the rules can look at.
    private(set) var extent = 0

    /// The error for a magic file that does not follow the format.
    struct FormatError: Error, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "malformed magic file at byte \(offset): \(reason)" }
    }

    /// The largest offset + range a rule may use; real databases stay far below it.
    static let maximumExtent = 1 << 20

    init() {}

    /// Parses a magic file. Throws `FormatError` for any deviation from the format.
    init(bytes: [UInt8]) throws(FormatError) {
        let header = Array("MIME-Magic\0\n".utf8)
        guard bytes.count >= header.count, Array(bytes[0..<header.count]) == header else {
            throw FormatError(offset: 0, reason: "missing MIME-Magic header")
        }
        var i = header.count
        func number() throws(FormatError) -> Int {
            var value = 0
            var digits = 0
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                value = value * 10 + Int(bytes[i] - 0x30)
                digits += 1
                i += 1
                guard value <= Self.maximumExtent else { throw FormatError(offset: i, reason: "number too large") }
            }
            guard digits > 0 else { throw FormatError(offset: i, reason: "expected a number") }
            return value
        }
        func expect(_ c: UInt8) throws(FormatError) {
            guard i < bytes.count, bytes[i] == c else {
                throw FormatError(offset: i, reason: "expected '\(Character(Unicode.Scalar(c)))'")
            }
            i += 1
        }
        while i < bytes.count {
            try expect(UInt8(ascii: "["))
            let priority = try number()
            try expect(UInt8(ascii: ":"))
            let start = i
            while i < bytes.count, bytes[i] != UInt8(ascii: "]"), bytes[i] != UInt8(ascii: "\n") { i += 1 }
            let mimeType = String(decoding: bytes[start..<i], as: UTF8.self).lowercased()
            try expect(UInt8(ascii: "]"))
            try expect(UInt8(ascii: "\n"))
            var flat: [Rule] = []
            while i < bytes.count, bytes[i] != UInt8(ascii: "[") {
                var indent = 0
                if bytes[i] != UInt8(ascii: ">") { indent = try number() }
                try expect(UInt8(ascii: ">"))
                let offset = try number()
                try expect(UInt8(ascii: "="))
                guard i + 2 <= bytes.count else { throw FormatError(offset: i, reason: "truncated value length") }
                let length = Int(bytes[i]) << 8 | Int(bytes[i + 1])
                i += 2
                guard length > 0, i + length <= bytes.count else {
                    throw FormatError(offset: i, reason: "value length \(length) runs past the end")
                }
                var value = Array(bytes[i..<i + length])
                i += length
                var mask: [UInt8]?
                if i < bytes.count, bytes[i] == UInt8(ascii: "&") {
                    i += 1
                    guard i + length <= bytes.count else { throw FormatError(offset: i, reason: "truncated mask") }
                    mask = Array(bytes[i..<i + length])
                    i += length
                }
                var wordSize = 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "~") {
                    i += 1
                    wordSize = try number()
                }
                var range = 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") {
                    i += 1
                    range = max(1, try number())
                }
                try expect(UInt8(ascii: "\n"))
                guard offset + range + length <= Self.maximumExtent else {
                    throw FormatError(offset: i, reason: "rule reaches past \(Self.maximumExtent) bytes")
                }
                // Values of multi-byte words are stored big-endian; this host reads little-endian.
                if wordSize == 2 || wordSize == 4, length % wordSize == 0 {
                    value = Self.swapWords(value, size: wordSize)
                    mask = mask.map { Self.swapWords($0, size: wordSize) }
                }
                extent = max(extent, offset + range - 1 + length)
                flat.append(Rule(indent: indent, offset: offset, value: value, mask: mask, rangeLength: range))
            }
            sections.append(Section(priority: priority, mimeType: mimeType, rules: Self.nest(flat)))
        }
        sections = sections.enumerated().sorted {
            $0.element.priority != $1.element.priority ? $0.element.priority > $1.element.priority : $0.offset < $1.offset
        }.map(\.element)
    }

    private static func swapWords(_ bytes: [UInt8], size: Int) -> [UInt8] {
        var out = bytes
        var i = 0
        while i + size <= out.count {
            out[i..<i + size].reverse()
            i += size
        }
        return out
    }

    /// Turns indented lines into a tree: each rule's children are the following lines one level deeper.
    private static func nest(_ flat: [Rule]) -> [Rule] {
        var index = 0
        func level(_ indent: Int) -> [Rule] {
            var rules: [Rule] = []
            while index < flat.count, flat[index].indent >= indent {
                if flat[index].indent > indent {
                    // A deeper line with no parent at this level: attach to the last rule, or skip it.
                    if rules.isEmpty { index += 1; continue }
                    rules[rules.count - 1].children += level(flat[index].indent)
                    continue
                }
                var rule = flat[index]
                index += 1
                rule.children = level(indent + 1)
                rules.append(rule)
            }
            return rules
        }
        return level(0)
    }

    /// Returns the best match for `data` (the file's first bytes): the highest-priority section
    /// that matches, with its priority. Among sections of that priority, one whose type is in
    /// `preferring` wins.
    func match(_ data: [UInt8], preferring: [String] = []) -> (mimeType: String, priority: Int)? {
        var best: (mimeType: String, priority: Int)?
        for section in sections {
            if let found = best, section.priority < found.priority { break }
            guard section.rules.contains(where: { Self.matches($0, data) }) else { continue }
            if best == nil {
                best = (section.mimeType, section.priority)
                if preferring.isEmpty { break }
            }
            if preferring.contains(section.mimeType) { return (section.mimeType, section.priority) }
        }
        return best
    }

    /// Returns every type whose magic matches `data`, highest priority first.
    func matches(_ data: [UInt8]) -> [String] {
        sections.filter { $0.rules.contains(where: { Self.matches($0, data) }) }.map(\.mimeType)
    }

    private static func matches(_ rule: Rule, _ data: [UInt8]) -> Bool {
        guard test(rule, data) else { return false }
        return rule.children.isEmpty || rule.children.contains { matches($0, data) }
    }

    private static func test(_ rule: Rule, _ data: [UInt8]) -> Bool {
        let length = rule.value.count
        var start = rule.offset
        let last = rule.offset + rule.rangeLength - 1
        while start <= last, start + length <= data.count {
            var ok = true
            if let mask = rule.mask {
                for k in 0..<length where (data[start + k] & mask[k]) != (rule.value[k] & mask[k]) {
                    ok = false
                    break
                }
            } else {
                for k in 0..<length where data[start + k] != rule.value[k] {
                    ok = false
                    break
                }
            }
            if ok { return true }
            start += 1
        }
        return false
    }
}
