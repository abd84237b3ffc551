/// How `folio search` prints the daemon's reply: shared by the `folio` front, which answers the
/// command itself, and `folio-tool`'s `SearchCommand`, so that both print the same bytes.
package enum SearchListing {
    /// The lines for `items` (the `items` of a `search` reply): each path, and under it the
    /// passage of its text, if any, its matched words between `marks`; with `json`, one line of
    /// JSON, the items as the daemon sent them.
    package static func lines(_ items: [WireValue], json: Bool, marks: (String, String)) -> [String] {
        if json { return [String(decoding: WireValue.array(items).serialized(), as: UTF8.self)] }
        var lines: [String] = []
        lines.reserveCapacity(items.count)
        for item in items {
            lines.append(item["p"]?.stringValue ?? "?")
            if let snippet = item["snippet"]?.stringValue { lines.append("    " + passage(snippet, marks: marks)) }
        }
        return lines
    }

    /// A snippet on one line, its matched words between `marks` (the wire's U+0002 and U+0003).
    package static func passage(_ snippet: String, marks: (String, String)) -> String {
        var line = ""
        for character in snippet {
            switch character {
            case "\u{2}": line += marks.0
            case "\u{3}": line += marks.1
            case _ where character.isNewline || character == "\t": line += " "
            default: line.append(character)
            }
        }
        return line
    }

    /// The marks for a terminal (bold) or for anything else (none).
    package static func marks(terminal: Bool) -> (String, String) {
        terminal ? ("\u{1B}[1m", "\u{1B}[0m") : ("", "")
    }
}
