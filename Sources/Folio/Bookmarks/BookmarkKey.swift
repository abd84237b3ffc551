import Crypto
import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The secret that signs this user's bookmarks (HMAC-SHA256): 32 random bytes in
/// `$XDG_CONFIG_HOME/folio/bookmark.key`, mode 0600, made on first use. Later the daemon alone will
/// hold it, so that sandboxed apps cannot forge bookmarks.
package struct BookmarkKey: Sendable {
    let key: SymmetricKey

    package init(bytes: [UInt8]) {
        key = SymmetricKey(data: bytes)
    }

    /// The key at `path`, created atomically when missing (two processes racing agree on one key).
    package static func load(path: String = FolioPaths().configDirectory + "/bookmark.key") throws -> BookmarkKey {
        if let bytes = try? FilePath(path).readBytes(maximumSize: 64), bytes.count == 32 { return BookmarkKey(bytes: bytes) }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var fresh = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in fresh.indices { fresh[index] = UInt8.random(in: 0...255, using: &generator) }
        let temporary = path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        try SafeSave.writeNew(Data(fresh), to: URL(fileURLWithPath: temporary), mode: 0o600)
        defer { unlink(temporary) }
        // link(2) fails when another process made the key first: then theirs is the key.
        _ = link(temporary, path)
        guard let bytes = try? FilePath(path).readBytes(maximumSize: 64), bytes.count == 32 else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "the bookmark key is damaged"])
        }
        return BookmarkKey(bytes: bytes)
    }

    func signature(of bytes: some DataProtocol) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
    }

    func isValid(_ signature: some DataProtocol, for bytes: some DataProtocol) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(Array(signature), authenticating: bytes, using: key)
    }
}
