extension TextWords {
    /// The passage of `text` around its first word beginning with one of `words` (folded, as
    /// ``words(of:)`` gives them): `length` words from a little before it, the matched words
    /// between U+0002 and U+0003, "…" where the text goes on; nil when no word matches in the
    /// first `scanned` characters. The text is read only as far as the passage.
    package static func snippet(of text: String, words wanted: [String], length: Int = 12, scanned: Int = 65_536) -> String? {
        guard !wanted.isEmpty, length > 0 else { return nil }
        // The words' ranges, as far as the passage needs them.
        var ranges: [Range<String.Index>] = []
        var matched: [Bool] = []
        var first: Int?
        var start: String.Index?
        var index = text.startIndex
        func endWord(at end: String.Index) {
            guard let begun = start else { return }
            let folded = MetadataFacts.searchFold(String(text[begun..<end]))
            let matches = wanted.contains { folded.hasPrefix($0) }
            ranges.append(begun..<end)
            matched.append(matches)
            if matches, first == nil { first = ranges.count - 1 }
            start = nil
        }
        var characters = 0
        while index < text.endIndex {
            if let first, ranges.count >= first + length { break }
            characters += 1
            // A search returns fifty passages at most: none is looked for past the limit.
            if first == nil, characters > scanned { return nil }
            let character = text[index]
            if character.isLetter || character.isNumber {
                if start == nil { start = index }
            } else {
                endWord(at: index)
            }
            index = text.index(after: index)
        }
        if index == text.endIndex { endWord(at: index) }
        guard let first else { return nil }
        let from = max(0, min(first - min(3, length - 1), ranges.count - length))
        let to = min(ranges.count, from + length)
        var passage = from > 0 ? "…" : ""
        var position = ranges[from].lowerBound
        for word in from..<to {
            passage += text[position..<ranges[word].lowerBound]
            passage += matched[word] ? "\u{2}" + text[ranges[word]] + "\u{3}" : String(text[ranges[word]])
            position = ranges[word].upperBound
        }
        if to < ranges.count || index < text.endIndex {
            passage += "…"
        } else {
            passage += text[position...]
        }
        return passage
    }
}
