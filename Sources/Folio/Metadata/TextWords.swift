import Foundation

/// Words as the content index reads them (SQLite FTS5's `unicode61` tokenizer with diacritics
/// removed): runs of letters and digits, case and accents folded. A comparison of
/// `kMDItemTextContent` with a string holds when the text has the string's words in sequence, the
/// last one possibly longer ("annual rep" finds "Annual Report"), as a Spotlight content search
/// does; the daemon's index answers it from FTS5 and the in-process search by the same rule.
package enum TextWords {
    /// The folded words of `text`.
    package static func words(of text: String) -> [String] {
        var words: [String] = []
        var word = ""
        // Folded once, whole: a document's text may hold a hundred thousand words.
        for character in text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) {
            if character.isLetter || character.isNumber {
                word.append(character)
            } else if !word.isEmpty {
                words.append(word)
                word = ""
            }
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    /// Whether `text` holds the words of `search` in sequence, the last as a prefix; false when
    /// `search` has no words.
    package static func text(_ text: String, holds search: String) -> Bool {
        let wanted = words(of: search.replacingOccurrences(of: "*", with: " ").replacingOccurrences(of: "?", with: " "))
        guard let last = wanted.last else { return false }
        let found = words(of: text)
        guard found.count >= wanted.count else { return false }
        for start in 0...(found.count - wanted.count) {
            if zip(found[start..<start + wanted.count - 1], wanted.dropLast()).allSatisfy({ $0 == $1 }), found[start + wanted.count - 1].hasPrefix(last) {
                return true
            }
        }
        return false
    }

    /// The FTS5 query for `search` (a phrase of its words, the last a prefix), or nil when it has
    /// no words.
    package static func ftsQuery(_ search: String) -> String? {
        let wanted = words(of: search.replacingOccurrences(of: "*", with: " ").replacingOccurrences(of: "?", with: " "))
        guard !wanted.isEmpty else { return nil }
        return "\"" + wanted.joined(separator: " ") + "\"*"
    }
}
