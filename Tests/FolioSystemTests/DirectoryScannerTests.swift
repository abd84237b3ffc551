import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The scanner reads each `readdir` record's name within the record (`DirectoryRecord`).
@Suite("Directory scanner", .elasticPool)
struct DirectoryScannerTests {
    /// Every name length from 1 to 255 bytes (ASCII and multi-byte), packed so that records end at
    /// every offset of libc's buffer: each comes back whole, none longer, nothing read past a record
    /// (under AddressSanitizer, `scripts/test` runs this suite too).
    @Test func namesOfEveryLengthComeBackExactly() throws {
        let dir = try TemporaryDirectory("scanner-names")
        var expected: Set<String> = []
        for length in 1...255 {
            let name = String(repeating: "n", count: length - 1) + (length % 2 == 0 ? "x" : "y")
            _ = FileManager.default.createFile(atPath: dir.path + "/" + name, contents: nil)
            expected.insert(name)
        }
        for count in 1...84 {
            let name = String(repeating: "é", count: count) + "z"  // 2 bytes each: up to 169 bytes
            _ = FileManager.default.createFile(atPath: dir.path + "/" + name, contents: nil)
            expected.insert(name)
        }
        var seen: [String] = []
        var skips: [String] = []
        let complete = DirectoryScanner().list(dir.path, visit: { seen.append($0.name) }, skipped: { path, _ in skips.append(path) })
        #expect(complete && skips.isEmpty, "\(skips)")
        #expect(seen.count == expected.count && Set(seen) == expected)
        #expect(Set(DirectoryRecord.names(in: dir.path)) == expected)
    }
}
