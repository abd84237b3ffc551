import Testing
@testable import UniformTypes
import FolioTestTraits

@Suite("FoldedKeyTable", .elasticPool)
struct FoldedKeyTableTests {
    @Test func idsAreDenseAndLookupsIgnoreASCIICase() {
        var table = FoldedKeyTable(capacity: 2)
        let keys = (0..<5000).map { "Key-\($0).Ext" }
        for (i, key) in keys.enumerated() {
            let (id, inserted) = table.insert(key)
            #expect(inserted && id == Int32(i))
        }
        #expect(table.count == 5000)
        for (i, key) in keys.enumerated() {
            #expect(table.id(of: key.uppercased()) == Int32(i))
            #expect(table.id(ofBytes: ArraySlice(key.lowercased().utf8)) == Int32(i))
        }
        #expect(table.insert("KEY-7.EXT") == (7, false))
        #expect(table.key(7) == "key-7.ext")
        #expect(table.id(of: "Key-5000.Ext") == nil)
        #expect(table.id(of: "") == nil)
        #expect(table.id(of: "Key-7.Ex") == nil)
    }

    @Test func nonASCIIKeysCompareAsLowercasedStrings() {
        var table = FoldedKeyTable()
        let (id, _) = table.insert("ÄBC")
        #expect(table.id(of: "äbc") == id)
        #expect(table.id(of: "äBc") == id)
        #expect(table.id(of: "abc") == nil)
        // Letters are folded; other bytes that differ by 0x20 are not confused with each other.
        table.insert("a@")
        #expect(table.id(of: "a`") == nil)
    }
}
