import Foundation

/// HTTP entity tags as the WebDAV and S3 providers use them for content versions, and the dates
/// of `Last-Modified` (``HTTPDate``).
enum ETag {
    /// The tag's opaque value, without `W/` and quotes (Apache marks a tag weak for a second after a
    /// write, then the same value turns strong).
    static func opaque(_ etag: String?) -> String? {
        guard let etag else { return nil }
        // Bytes, not Foundation's trimming (which bridges to NSString: 2% of a download's time).
        var value = Substring(etag).utf8.drop { $0 == 0x20 || $0 == 0x09 }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        if value.starts(with: "W/".utf8) { value = value.dropFirst(2) }
        if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") { value = value.dropFirst().dropLast() }
        return value.isEmpty ? nil : String(Substring(value))
    }

    /// Whether `text` can go in an `If-Match` header as a tag: visible ASCII without quotes.
    static func isHeaderSafe(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") }
    }

    /// Whether a content version is one of the server's tags (not a stand-in digest, which starts
    /// with `folio:`), so it can be sent as a condition.
    static func isServerTag(_ version: String) -> Bool {
        isHeaderSafe(version) && !version.hasPrefix("folio:")
    }

    /// An HTTP date (`Last-Modified`, `getlastmodified`).
    static func date(_ text: String) -> Date? { HTTPDate.parse(text) }
}
