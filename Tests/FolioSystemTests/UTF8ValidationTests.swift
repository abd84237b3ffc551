import FolioSystem
import FolioTestTraits
import Testing

/// `String(validUTF8:)` accepts exactly what the standard library's `String(validating:as:)` does.
@Suite("UTF-8 validation", .elasticPool)
struct UTF8ValidationTests {
    /// Each kind of malformed sequence, and well-formed text of every length of encoding.
    @Test(arguments: [
        [UInt8](), Array("plain ascii".utf8), Array("é ∑ 𝄞 \u{FFFD}".utf8),
        [0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
        [0x61, 0xE2, 0x82], [0xE2, 0x82, 0x61], [0xFF], [0xEF, 0xBF, 0xBD, 0xFE], [0x00, 0x7F],
    ])
    func agreesWithTheStandardLibrary(bytes: [UInt8]) {
        #expect(String(validUTF8: bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
        #expect(String(validUTF8: bytes[...]) == String(validating: bytes, as: UTF8.self), "\(bytes)")
    }

    /// Random bytes, mostly text with some bytes changed: both say the same of every one.
    @Test func agreesOnRandomBytes() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "Z", "é", "∑", "𝄞", "\u{FFFD}"]
        var disagreements: [[UInt8]] = []
        var invalid = 0
        for _ in 0..<20_000 {
            var bytes = Array(String((0..<Int.random(in: 1...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }).utf8)
            for _ in 0..<Int.random(in: 0...2, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let expected = String(validating: bytes, as: UTF8.self)
            if expected == nil { invalid += 1 }
            if String(validUTF8: bytes) != expected { disagreements.append(bytes) }
        }
        #expect(disagreements.count == 0, "\(disagreements.count) disagreements, the first: \(disagreements.prefix(3))")
        // Both kinds were tried.
        #expect(invalid > 1000 && invalid < 19_000, "\(invalid) of 20,000 invalid")
    }
}
