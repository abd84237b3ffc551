import Folio

/// A path relative to a replica's root ("a/b.txt"), compared and hashed as bytes: Swift's `String`
/// equality merges NFC and NFD spellings, which Linux file systems and servers keep apart.
struct SyncPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    init(_ text: String) { bytes = Array(text.utf8) }

    var text: String { String(decoding: bytes, as: UTF8.self) }
    var description: String { text }

    /// The last segment.
    var name: String {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return text }
        return String(decoding: bytes[(slash + 1)...], as: UTF8.self)
    }

    /// The folder holding it (nil at the top level).
    var parent: SyncPath? {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return SyncPath(bytes: Array(bytes[..<slash]))
    }

    /// How many folders deep it is (0 at the top level).
    var depth: Int { bytes.lazy.filter { $0 == UInt8(ascii: "/") }.count }

    /// `name` inside this folder.
    func appending(_ name: String) -> SyncPath {
        var joined: [UInt8] = []
        joined.reserveCapacity(bytes.count + 1 + name.utf8.count)
        joined += bytes
        joined.append(UInt8(ascii: "/"))
        joined += name.utf8
        return SyncPath(bytes: joined)
    }

    /// The replica's root (the empty path), which every path lies within.
    static let root = SyncPath("")

    /// Whether this path is `folder` or lies below it.
    func isWithin(_ folder: SyncPath) -> Bool {
        folder.bytes.isEmpty || bytes == folder.bytes || (bytes.count > folder.bytes.count && bytes.starts(with: folder.bytes) && bytes[folder.bytes.count] == UInt8(ascii: "/"))
    }

    static func < (lhs: SyncPath, rhs: SyncPath) -> Bool {
        lhs.bytes.withUnsafeBytes { x in rhs.bytes.withUnsafeBytes { y in ByteOrder.precedes(x, y) } }
    }

    // Equal and hashed as whole buffers: an array's own conformances take each byte on its own,
    // and a pass compares and hashes every path many times.
    static func == (lhs: SyncPath, rhs: SyncPath) -> Bool {
        lhs.bytes.withUnsafeBytes { x in rhs.bytes.withUnsafeBytes { y in ByteOrder.equal(x, y) } }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    init(bytes: [UInt8]) { self.bytes = bytes }
}
