import Crypto
import FolioSystem
package import Foundation

/// Secrets kept at rest (a drive's password or S3 secret key): sealed with ChaCha20-Poly1305 under
/// a per-user key of their own (`$XDG_CONFIG_HOME/folio/credentials.key`, mode 0600, made like the
/// bookmark key), in files of mode 0600. Never in the index, never in logs.
package enum SecretBox {
    /// The key file beside the configuration.
    package static func keyPath(_ paths: FolioPaths = FolioPaths()) -> String { paths.configDirectory + "/credentials.key" }

    /// Seals `secret` into the file at `path`.
    package static func store(_ secret: String, at path: String, keyPath: String = SecretBox.keyPath()) throws {
        let key = try BookmarkKey.load(path: keyPath).key
        let sealed = try ChaChaPoly.seal(Data(secret.utf8), using: key).combined
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = URL(fileURLWithPath: path + ".new")
        try? FileManager.default.removeItem(at: temporary)
        try SafeSave.writeNew(sealed, to: temporary, mode: 0o600)
        try SafeSave.commit(temporary, over: URL(fileURLWithPath: path), preservingAttributesOf: nil, mode: 0o600)
    }

    /// The secret sealed in the file at `path`, or nil when there is none.
    /// - Throws: when the file is damaged or sealed under another key.
    package static func load(at path: String, keyPath: String = SecretBox.keyPath()) throws -> String? {
        guard let sealed = FileManager.default.contents(atPath: path) else { return nil }
        let key = try BookmarkKey.load(path: keyPath).key
        do {
            return String(decoding: try ChaChaPoly.open(ChaChaPoly.SealedBox(combined: sealed), using: key), as: UTF8.self)
        } catch {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "the stored secret cannot be opened (damaged, or sealed under another key)"])
        }
    }
}
