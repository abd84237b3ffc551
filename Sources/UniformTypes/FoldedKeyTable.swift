/// A hash table from byte strings to dense ids, comparing ASCII letters without regard to case.
///
/// Type identifiers, filename extensions and MIME types are ASCII and case-insensitive. Keying them
/// through `Dictionary<String, …>` meant lowercasing a copy and SipHashing it for every line of the
/// shared-mime-info files and every lookup; this table hashes the bytes in place, folded, and is
/// probed straight from a parser's byte slices or a `String`'s UTF-8 storage. Keys with non-ASCII
/// bytes are lowercased by Unicode rules first, so they compare as `String.lowercased()` would.
///
/// Ids are assigned in insertion order from 0; callers keep their per-key data in arrays by id.
struct FoldedKeyTable: Sendable {
    /// Slot → id, or -1 when empty. The count is a power of two, at most half full.
    private var slots: [Int32]
    /// Slot → the key's hash, so most mismatches are rejected without comparing bytes.
    private var slotHashes: [UInt32]
    /// Every key's folded bytes, back to back; key `id` spans `ends[id - 1] ..< ends[id]`.
    private var arena: [UInt8] = []
    private var ends: [Int32] = []
    private let seed: UInt32

    /// The number of keys.
    var count: Int { ends.count }

    /// Creates a table sized for about `capacity` keys.
    init(capacity: Int = 16) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: -1, count: size)
        slotHashes = Array(repeating: 0, count: size)
        arena.reserveCapacity(capacity * 24)
        ends.reserveCapacity(capacity)
        seed = UInt32.random(in: 0...UInt32.max)
    }

    /// Returns the key with `id`, as stored (folded to lowercase).
    func key(_ id: Int32) -> String {
        let start = id == 0 ? 0 : Int(ends[Int(id) - 1])
        return String(decoding: arena[start..<Int(ends[Int(id)])], as: UTF8.self)
    }

    // MARK: Lookup

    /// Returns the id of `key`, or nil.
    func id(of key: String) -> Int32? {
        Self.withFoldableBytes(key) { find($0) }
    }

    /// Returns the id of the key spelled by `bytes` (ASCII case ignored), or nil.
    func id(ofBytes bytes: ArraySlice<UInt8>) -> Int32? {
        bytes.withUnsafeBufferPointer { find($0) }
    }

    // MARK: Insertion

    /// Adds `key` unless present. Returns its id and whether it was added.
    @discardableResult
    mutating func insert(_ key: String) -> (id: Int32, inserted: Bool) {
        Self.withFoldableBytes(key) { insert($0) }
    }

    /// Adds the key spelled by `bytes` unless present. Returns its id and whether it was added.
    @discardableResult
    mutating func insert(bytes: ArraySlice<UInt8>) -> (id: Int32, inserted: Bool) {
        bytes.withUnsafeBufferPointer { insert($0) }
    }

    // MARK: Implementation

    /// Lowercases an ASCII letter; leaves every other byte alone.
    static func fold(_ byte: UInt8) -> UInt8 { byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte }

    /// Calls `body` with the key's UTF-8 bytes, Unicode-lowercased first when any byte is not ASCII.
    private static func withFoldableBytes<R>(_ key: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var key = key
        if let result = key.withUTF8({ bytes in bytes.contains(where: { $0 >= 0x80 }) ? nil : body(bytes) }) {
            return result
        }
        var lowered = key.lowercased()
        return lowered.withUTF8(body)
    }

    private func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var h: UInt32 = 2_166_136_261 ^ seed  // FNV-1a over folded bytes, seeded per table
        for byte in bytes { h = (h ^ UInt32(Self.fold(byte))) &* 16_777_619 }
        return h ^ (h >> 15)
    }

    private func matches(_ id: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = id == 0 ? 0 : Int(ends[Int(id) - 1])
        let end = Int(ends[Int(id)])
        guard end - start == bytes.count else { return false }
        var i = start
        for byte in bytes {
            if arena[i] != Self.fold(byte) { return false }
            i += 1
        }
        return true
    }

    /// The slot holding `bytes`, or the empty slot where it would go.
    private func probe(_ bytes: UnsafeBufferPointer<UInt8>, hash h: UInt32) -> Int {
        let mask = slots.count - 1
        var slot = Int(h) & mask
        while true {
            let id = slots[slot]
            if id < 0 || (slotHashes[slot] == h && matches(id, bytes)) { return slot }
            slot = (slot + 1) & mask
        }
    }

    private func find(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        let id = slots[probe(bytes, hash: hash(bytes))]
        return id < 0 ? nil : id
    }

    private mutating func insert(_ bytes: UnsafeBufferPointer<UInt8>) -> (id: Int32, inserted: Bool) {
        let h = hash(bytes)
        let slot = probe(bytes, hash: h)
        if slots[slot] >= 0 { return (slots[slot], false) }
        let id = Int32(ends.count)
        arena.append(contentsOf: bytes.lazy.map(Self.fold))
        ends.append(Int32(arena.count))
        slots[slot] = id
        slotHashes[slot] = h
        if ends.count * 2 > slots.count { grow() }
        return (id, true)
    }

    private mutating func grow() {
        let size = slots.count * 2
        var newSlots = [Int32](repeating: -1, count: size)
        var newHashes = [UInt32](repeating: 0, count: size)
        for (slot, id) in slots.enumerated() where id >= 0 {
            let h = slotHashes[slot]
            var s = Int(h) & (size - 1)
            while newSlots[s] >= 0 { s = (s + 1) & (size - 1) }
            newSlots[s] = id
            newHashes[s] = h
        }
        slots = newSlots
        slotHashes = newHashes
    }
}
