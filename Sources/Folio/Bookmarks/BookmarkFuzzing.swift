import Foundation

/// Entry points for the fuzz targets in `Fuzz/` (not API): bookmark data from untrusted hands.
@_spi(Fuzzing)
public enum BookmarkFuzzing {
    /// Decodes `bytes` as bookmark data, and as a payload signed with the key (so the checks behind
    /// the signature are reached too): refusal or a valid bookmark, never a trap.
    public static func exercise(_ bytes: [UInt8]) {
        let key = BookmarkKey(bytes: Array(repeating: 3, count: 32))
        _ = try? Bookmark(decoding: Data(bytes), key: key)
        guard bytes.count <= Bookmark.maximumPayload else { return }
        var signed = Bookmark.magic
        withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { signed.append(contentsOf: $0) }
        signed += bytes
        signed += key.signature(of: signed)
        if let bookmark = try? Bookmark(decoding: Data(signed), key: key) {
            precondition(bookmark.path.hasPrefix("/") && DocumentIdentity.isValid(bookmark.identity))
            let again = try? Bookmark(decoding: bookmark.encoded(key: key), key: key)
            precondition(again?.path == bookmark.path && again?.identity == bookmark.identity)
        }
    }
}
