#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Byte order of UTF-8 text (not Swift's Unicode order, which merges NFC and NFD spellings): the
/// order paged listings and sync paths sort in, compared with `memcmp` rather than byte by byte.
package enum ByteOrder {
    /// Whether `x` sorts before `y`, byte by byte, a prefix first.
    package static func precedes(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Bool {
        let common = min(x.count, y.count)
        let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
        return order != 0 ? order < 0 : x.count < y.count
    }

    /// Whether `x` and `y` hold the same bytes.
    package static func equal(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Bool {
        x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
    }

    /// Whether `x`'s UTF-8 bytes sort before `y`'s.
    package static func precedes(_ x: String, _ y: String) -> Bool {
        var x = x, y = y
        return x.withUTF8 { x in y.withUTF8 { y in precedes(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
    }
}
