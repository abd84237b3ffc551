import Crypto
import Folio

/// The digest of a listing's reply, the same for two replies that differ only in the order of a
/// start tag's attributes or the spaces between them: Apache writes each response's namespace
/// declarations in its hash table's order, which differs from one of its processes to the next, so
/// the bytes of one unchanged folder's listing vary while what they say does not.
///
/// An ETag's weak mark (`W/`) first in a `getetag` element's text is passed over too: Apache lists
/// a file written within the last second with a weak tag, then the same tag strong, and the version
/// Folio reads from it is the same (``ETag/opaque(_:)``).
///
/// Everything else counts byte for byte. Comments, CDATA sections and processing instructions are
/// passed over whole, and a start tag that is not plainly well formed (an attribute without a quoted
/// value, a reply cut short) is taken as it is, so two replies with one digest always read the same.
enum ListingDigest {
    /// What stands before each attribute of a tag whose attributes are put in order.
    private static let space: [UInt8] = [UInt8(ascii: " ")]

    /// The digest of `body`.
    static func of(_ body: [UInt8]) -> SHA256Digest {
        var hasher = SHA256()
        body.withUnsafeBufferPointer { bytes in
            let count = bytes.count
            // Where the bytes not yet hashed start.
            var flushed = 0
            var position = 0
            var attributes: [Range<Int>] = []
            func raw(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[range])) }
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            // Whether a start tag's name is `getetag`, with or without a prefix.
            func isETag(_ name: Range<Int>) -> Bool {
                let local = Array("getetag".utf8)
                guard name.count >= local.count, local.indices.allSatisfy({ bytes[name.upperBound - local.count + $0] == local[$0] }) else { return false }
                return name.count == local.count || bytes[name.upperBound - local.count - 1] == UInt8(ascii: ":")
            }
            func skip(past terminator: [UInt8], from start: Int) -> Int {
                var index = start
                while index + terminator.count <= count {
                    if bytes[index] == terminator[0], terminator.indices.allSatisfy({ bytes[index + $0] == terminator[$0] }) { return index + terminator.count }
                    index += 1
                }
                return count
            }
            while position < count {
                guard bytes[position] == UInt8(ascii: "<"), position + 1 < count else {
                    position += 1
                    continue
                }
                let next = bytes[position + 1]
                if next == UInt8(ascii: "!") {
                    let rest = bytes[(position + 2)...]
                    let end = rest.starts(with: "--".utf8) ? "-->" : rest.starts(with: "[CDATA[".utf8) ? "]]>" : ">"
                    position = skip(past: Array(end.utf8), from: position + 2)
                    continue
                }
                if next == UInt8(ascii: "?") {
                    position = skip(past: Array("?>".utf8), from: position + 2)
                    continue
                }
                if next == UInt8(ascii: "/") || isSpace(next) || next == UInt8(ascii: ">") {
                    position += 1
                    continue
                }
                // A start tag: its name, then its attributes, each `name="value"` or `name='value'`.
                var index = position + 1
                while index < count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: ">"), bytes[index] != UInt8(ascii: "/") { index += 1 }
                let nameEnd = index
                attributes.removeAll(keepingCapacity: true)
                var plain = true
                while true {
                    var start = index
                    while start < count, isSpace(bytes[start]) { start += 1 }
                    guard start < count else { plain = false; break }
                    if bytes[start] == UInt8(ascii: ">") || bytes[start] == UInt8(ascii: "/") {
                        index = start
                        break
                    }
                    guard start > index else { plain = false; break }
                    var cursor = start
                    while cursor < count, bytes[cursor] != UInt8(ascii: "="), !isSpace(bytes[cursor]), bytes[cursor] != UInt8(ascii: ">") { cursor += 1 }
                    guard cursor + 1 < count, cursor > start, bytes[cursor] == UInt8(ascii: "="),
                        bytes[cursor + 1] == UInt8(ascii: "\"") || bytes[cursor + 1] == UInt8(ascii: "'")
                    else { plain = false; break }
                    let quote = bytes[cursor + 1]
                    cursor += 2
                    while cursor < count, bytes[cursor] != quote { cursor += 1 }
                    guard cursor < count else { plain = false; break }
                    attributes.append(start..<(cursor + 1))
                    index = cursor + 1
                }
                guard plain else {
                    position += 1
                    continue
                }
                if attributes.count > 1 {
                    hasher.update(bufferPointer: raw(flushed..<nameEnd))
                    attributes.sort { ByteOrder.precedes(raw($0), raw($1)) }
                    for attribute in attributes {
                        hasher.update(data: space)
                        hasher.update(bufferPointer: raw(attribute))
                    }
                    flushed = index
                }
                // An ETag's weak mark, first in its element's text, is passed over: Apache marks a
                // tag weak for a second after a write, and the version read from it drops the mark.
                if index + 3 < count, bytes[index] == UInt8(ascii: ">"), bytes[index + 1] == UInt8(ascii: "W"), bytes[index + 2] == UInt8(ascii: "/"),
                    bytes[index + 3] == UInt8(ascii: "\""), isETag(position + 1..<nameEnd)
                {
                    hasher.update(bufferPointer: raw(flushed..<(index + 1)))
                    flushed = index + 3
                    index += 3
                }
                position = index
            }
            hasher.update(bufferPointer: raw(flushed..<count))
        }
        return hasher.finalize()
    }
}
