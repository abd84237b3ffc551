/// The text of HTML or XML: tags dropped, character references decoded, block ends as line
/// breaks, `script` and `style` left out. One pass over the bytes with no nesting kept, so a
/// document nested a million deep costs what a flat one does; the text stops at `limit` bytes.
/// Markup that is not well formed gives what text it has: this is for search, not for reading.
struct MarkupText {
    /// Elements whose ends break lines (local names: a prefix such as `text:` or `w:` is dropped).
    var blocks: Set<String>
    /// Elements whose content is not text (HTML's `script` and `style`).
    var skipped: Set<String> = []
    /// Elements that are themselves a line break or a tab (`w:br`, `w:tab`, `text:line-break`).
    var breaks: Set<String> = []
    var tabs: Set<String> = []

    /// What an element does to the text, by local name: one lookup a tag.
    private enum Role {
        case block, skipped, lineBreak, tab
    }

    /// The roles of the elements named in the sets (a break that is also a block is a break).
    private var roles: [String: Role] {
        var roles: [String: Role] = [:]
        for name in blocks { roles[name] = .block }
        for name in tabs { roles[name] = .tab }
        for name in breaks { roles[name] = .lineBreak }
        for name in skipped { roles[name] = .skipped }
        return roles
    }

    static let html = MarkupText(
        blocks: ["p", "div", "br", "li", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "title", "section", "article", "blockquote", "pre", "dt", "dd"],
        skipped: ["script", "style", "noscript", "template"], breaks: ["br", "hr"])

    /// The text, at most `limit` bytes of UTF-8 (cut at a character boundary).
    func text(of bytes: [UInt8], limit: Int) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, bytes.count))
        let roles = self.roles
        var skipping: String?
        // One buffer for every tag's name.
        var name: [UInt8] = []
        name.reserveCapacity(64)
        var index = bytes.startIndex
        func newline() {
            if let last = output.last, last != UInt8(ascii: "\n") { output.append(UInt8(ascii: "\n")) }
        }
        while index != bytes.endIndex, output.count < limit {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") {
                // A tag, a comment, a CDATA section or a declaration: read to its end.
                var end = bytes.index(after: index)
                name.removeAll(keepingCapacity: true)
                var closing = false
                var readingName = true
                if end != bytes.endIndex, bytes[end] == UInt8(ascii: "/") {
                    closing = true
                    end = bytes.index(after: end)
                }
                let isComment = bytes[end...].starts(with: "!--".utf8)
                let isCData = bytes[end...].starts(with: "![CDATA[".utf8)
                if isCData {
                    // CDATA is text, as it is.
                    var cursor = bytes.index(end, offsetBy: 8, limitedBy: bytes.endIndex) ?? bytes.endIndex
                    while cursor != bytes.endIndex, !bytes[cursor...].starts(with: "]]>".utf8), output.count < limit {
                        if skipping == nil { output.append(bytes[cursor]) }
                        cursor = bytes.index(after: cursor)
                    }
                    index = bytes.index(cursor, offsetBy: 3, limitedBy: bytes.endIndex) ?? bytes.endIndex
                    continue
                }
                while end != bytes.endIndex {
                    let next = bytes[end]
                    if isComment {
                        if bytes[end...].starts(with: "-->".utf8) {
                            end = bytes.index(end, offsetBy: 2)
                            break
                        }
                    } else if next == UInt8(ascii: ">") {
                        break
                    } else if readingName {
                        if next == UInt8(ascii: " ") || next == UInt8(ascii: "/") || next == UInt8(ascii: "\t") || next == UInt8(ascii: "\n")
                            || next == UInt8(ascii: "\r")
                        {
                            readingName = false
                        } else if name.count < 64 {
                            name.append(next | (next >= 0x41 && next <= 0x5A ? 0x20 : 0))
                        }
                    }
                    end = bytes.index(after: end)
                }
                index = end == bytes.endIndex ? end : bytes.index(after: end)
                guard !isComment else { continue }
                let local = Self.localName(name)
                if let skipped = skipping {
                    if closing, local == skipped { skipping = nil }
                    continue
                }
                let selfClosing = end < bytes.count && end > 0 && bytes[end - 1] == UInt8(ascii: "/")
                switch roles[local] {
                case .skipped: if !closing, !selfClosing { skipping = local }
                case .lineBreak: output.append(UInt8(ascii: "\n"))
                case .tab: output.append(UInt8(ascii: "\t"))
                case .block: newline()
                case nil: break
                }
                continue
            }
            if skipping != nil {
                index = bytes.index(after: index)
                continue
            }
            if byte == UInt8(ascii: "&") {
                // A character reference: decoded when known, kept as it is otherwise.
                var end = bytes.index(after: index)
                var entity: [UInt8] = []
                while end != bytes.endIndex, entity.count < 10, bytes[end] != UInt8(ascii: ";"), bytes[end] != UInt8(ascii: "&"), bytes[end] != UInt8(ascii: "<") {
                    entity.append(bytes[end])
                    end = bytes.index(after: end)
                }
                if end != bytes.endIndex, bytes[end] == UInt8(ascii: ";"), let decoded = Self.reference(entity) {
                    output.append(contentsOf: decoded.utf8)
                    index = bytes.index(after: end)
                    continue
                }
            }
            // Runs of white space are one space (a line break stays one).
            if Self.isSpace(byte) {
                if let last = output.last, last != UInt8(ascii: " "), last != UInt8(ascii: "\n"), last != UInt8(ascii: "\t") { output.append(UInt8(ascii: " ")) }
                index = bytes.index(after: index)
            } else {
                // A run of plain text, copied at once.
                var end = bytes.index(after: index)
                while end != bytes.endIndex, end - index < limit - output.count {
                    let next = bytes[end]
                    if next == UInt8(ascii: "<") || next == UInt8(ascii: "&") || Self.isSpace(next) { break }
                    end = bytes.index(after: end)
                }
                output.append(contentsOf: bytes[index..<end])
                index = end
            }
        }
        while let last = output.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\n") { output.removeLast() }
        return Self.cut(output, limit: limit)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    /// UTF-8 text from `bytes`, at most `limit` bytes, not ending inside a character; invalid
    /// sequences become U+FFFD.
    static func cut(_ bytes: [UInt8], limit: Int) -> String {
        var end = min(bytes.count, limit)
        // Back off continuation bytes so the last character is whole.
        if end < bytes.count { while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 } }
        // A character the bytes themselves end inside of (text cut at the limit as it was made)
        // is left out whole.
        var lead = end
        while lead > 0, end - lead < 4, bytes[lead - 1] & 0xC0 == 0x80 { lead -= 1 }
        if lead > 0 {
            let first = bytes[lead - 1]
            let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
            if lead - 1 + length > end { end = lead - 1 }
        }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    private static func localName(_ name: [UInt8]) -> String {
        let local = name.lastIndex(of: UInt8(ascii: ":")).map { name[(name.index(after: $0))...] } ?? name[...]
        return String(decoding: local, as: UTF8.self)
    }

    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "shy": "", "ndash": "–", "mdash": "—", "hellip": "…",
        "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”", "laquo": "«", "raquo": "»", "copy": "©", "reg": "®", "eacute": "é",
        "egrave": "è", "agrave": "à", "ccedil": "ç", "uuml": "ü", "ouml": "ö", "auml": "ä", "szlig": "ß", "euro": "€",
    ]

    private static func reference(_ entity: [UInt8]) -> String? {
        guard let first = entity.first else { return nil }
        if first == UInt8(ascii: "#") {
            let digits = String(decoding: entity.dropFirst(), as: UTF8.self)
            let number = digits.hasPrefix("x") || digits.hasPrefix("X") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let number, number != 0, let scalar = Unicode.Scalar(number) else { return nil }
            return String(Character(scalar))
        }
        return named[String(decoding: entity, as: UTF8.self)]
    }
}
