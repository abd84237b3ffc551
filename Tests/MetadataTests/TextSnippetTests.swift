@testable import Folio
import FolioTestTraits
import Testing

/// The passages a content search returns: the words around the first match, matched words marked
/// (U+0002 … U+0003), folded as the content index folds them.
@Suite("Search passages", .elasticPool)
struct TextSnippetTests {
    @Test func aShortTextIsWholeWithItsMatchesMarked() {
        #expect(TextWords.snippet(of: "budget budget: the Budget.", words: ["budget"]) == "\u{2}budget\u{3} \u{2}budget\u{3}: the \u{2}Budget\u{3}.")
    }

    @Test func aLongTextIsCutAroundTheFirstMatch() {
        let text = (1...40).map { "w\($0)" }.joined(separator: " ") + " Café crème " + (41...80).map { "w\($0)" }.joined(separator: " ")
        let passage = TextWords.snippet(of: text, words: ["cafe", "crem"], length: 6)
        #expect(passage == "…w38 w39 w40 \u{2}Café\u{3} \u{2}crème\u{3} w41…")
    }

    @Test func aMatchNearTheEndFillsThePassageFromBefore() {
        #expect(TextWords.snippet(of: "one two three four five target", words: ["targ"], length: 4) == "…three four five \u{2}target\u{3}")
    }

    @Test func aMatchPastTheScannedCharactersIsNoPassage() {
        let text = String(repeating: "filler ", count: 20) + "target"
        #expect(TextWords.snippet(of: text, words: ["target"], scanned: 50) == nil)
        #expect(TextWords.snippet(of: text, words: ["target"], length: 2, scanned: 500) == "…filler \u{2}target\u{3}")
    }

    @Test func noMatchIsNoPassage() {
        #expect(TextWords.snippet(of: "nothing here at all", words: ["budget"]) == nil)
        #expect(TextWords.snippet(of: "", words: ["budget"]) == nil)
        #expect(TextWords.snippet(of: "budget", words: []) == nil)
    }
}
