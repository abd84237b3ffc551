import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
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

    /// Attributes listed by folder (`listxattrat`) are those listed by path: none, one, more than
    /// the first buffer holds; a symbolic link's are not read (nor its target's).
    @Test func attributeNamesListedByFolderAreThoseByPath() throws {
        let dir = try TemporaryDirectory("scanner-attributes")
        for name in ["plain", "tagged", "many"] { _ = FileManager.default.createFile(atPath: dir.path + "/" + name, contents: nil) }
        try FilePath(dir.path + "/tagged").setExtendedAttribute(named: "user.xdg.tags", to: Array("a,b".utf8))
        for index in 0..<40 {
            try FilePath(dir.path + "/many").setExtendedAttribute(named: "user.folio.attribute-with-a-long-name-\(index)", to: [1])
        }
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link", withDestinationPath: dir.path + "/tagged")
        var scanner = DirectoryScanner()
        scanner.readsAttributeNames = true
        var entries: [String: DirectoryScanner.Entry] = [:]
        #expect(scanner.list(dir.path, visit: { entries[$0.name] = $0 }, skipped: { _, _ in }))
        #expect(entries["link"]?.attributeNames == nil)
        for name in ["plain", "tagged", "many"] {
            let byPath = try FilePath(dir.path + "/" + name).extendedAttributeNames(followSymlinks: false)
            // nil only on kernels before 6.13, which lack listxattrat.
            let byFolder = try #require(entries[name]?.attributeNames, "this kernel (6.13 or later) lists attributes by folder")
            #expect(Set(byFolder) == Set(byPath), "\(name)")
        }
        #expect(entries["tagged"]?.attributeNames?.contains("user.xdg.tags") == true)
        #expect(entries["many"]?.attributeNames?.count == 40)
        var unread = 0
        #expect(DirectoryScanner().list(dir.path, visit: { if $0.attributeNames == nil { unread += 1 } }, skipped: { _, _ in }))
        #expect(unread == 4, "a scanner not asked to read attributes reads none")
    }
}
