/// The CRC-32 of zip and PNG (polynomial 0xEDB88320): a zip snapshot's entries, the sync
/// engine's note log's records.
package struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }
    private var state: UInt32 = 0xFFFF_FFFF

    package init() {}

    /// Adds `bytes` to what is summed.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        var c = state
        let table = Self.table
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        state = c
    }

    /// The sum of the bytes so far.
    package var value: UInt32 { state ^ 0xFFFF_FFFF }
}
