import Crypto
import FolioSystem
import Foundation
import SystemPackage

/// Secrets kept at rest (a drive's password or S3 secret key): sealed with ChaCha20-Poly1305, in
/// files of mode 0600, never in the index, never in logs. The key that seals them is kept in the
/// user's session keyring when the session has one (``SessionKeyring``), so that Folio's folders
/// alone do not hold both the sealed secret and its key; otherwise in
/// `$XDG_CONFIG_HOME/folio/credentials.key` (mode 0600, made like the bookmark key). A key file
/// found when a secret is sealed with a keyring reachable is moved into it.
///
/// Blocking (files, and `secret-tool` when there is a keyring): for a blocking pool or a
/// command's own thread.
package enum SecretBox {
    /// Where the key is kept.
    package enum KeyPlace: Equatable, Sendable {
        /// In the session keyring.
        case keyring
        /// In the key file (the session has no keyring Folio can reach).
        case file(String)
        /// Nowhere yet: no secret was sealed.
        case none
    }

    /// The key file beside the configuration.
    package static func keyPath(_ paths: FolioPaths = FolioPaths()) -> String { paths.configDirectory + "/credentials.key" }

    /// The session keyring of the configuration in `paths`, if one can be reached.
    static func keyring(_ paths: FolioPaths, _ environment: [String: String]) -> SessionKeyring? {
        SessionKeyring(configDirectory: paths.configDirectory, environment: environment)
    }

    /// Seals `secret` into the file at `path`, under the keyring's key when there is a keyring
    /// (made there, or moved there from the key file, when it has none), else under the key file's.
    package static func store(
        _ secret: String, at path: String, paths: FolioPaths = FolioPaths(), environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let key = try sealingKey(paths, environment)
        let sealed = try ChaChaPoly.seal(Data(secret.utf8), using: key).combined
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = URL(fileURLWithPath: path + ".new")
        try? FileManager.default.removeItem(at: temporary)
        try SafeSave.writeNew(sealed, to: temporary, mode: 0o600)
        try SafeSave.commit(temporary, over: URL(fileURLWithPath: path), preservingAttributesOf: nil, mode: 0o600)
    }

    /// The secret sealed in the file at `path`, or nil when there is none. The keyring's key and
    /// the key file's are tried (the seal tells which one it was). Nothing is moved here: a
    /// process that reads the secret (the daemon, a command) may run without the session, so the
    /// key moves into the keyring only when the secret is sealed again (`folio drive setup`).
    /// - Throws: when the file is damaged, or sealed under a key neither place holds (or under
    ///   the keyring's while it cannot be reached).
    package static func load(
        at path: String, paths: FolioPaths = FolioPaths(), environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String? {
        guard let sealed = FileManager.default.contents(atPath: path) else { return nil }
        let keyring = keyring(paths, environment)
        var stored: [UInt8]?
        var unreachable: String?
        do {
            stored = try keyring?.lookup()
        } catch {
            unreachable = "\(error.localizedDescription)"
        }
        if keyring == nil { unreachable = "this process has no session bus or no secret-tool" }
        let box = try? ChaChaPoly.SealedBox(combined: sealed)
        if let box, let stored, let opened = try? ChaChaPoly.open(box, using: SymmetricKey(data: stored)) {
            return String(decoding: opened, as: UTF8.self)
        }
        if let box, let file = fileKey(paths), let opened = try? ChaChaPoly.open(box, using: SymmetricKey(data: file)) {
            return String(decoding: opened, as: UTF8.self)
        }
        var reason = "the stored secret cannot be opened (damaged, or sealed under another key)"
        if let unreachable { reason += "; its key may be in the session keyring, which could not be reached: \(unreachable)" }
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: reason])
    }

    /// Where the key is kept now (looked up, never made).
    package static func keyPlace(_ paths: FolioPaths = FolioPaths(), environment: [String: String] = ProcessInfo.processInfo.environment) -> KeyPlace {
        if let keyring = keyring(paths, environment), (try? keyring.lookup()) ?? nil != nil { return .keyring }
        return fileKey(paths) == nil ? .none : .file(keyPath(paths))
    }

    /// The key to seal with: the keyring's (made there, or the key file's moved there, when it has
    /// none; the file is removed once the keyring holds its key); the key file's (made when
    /// missing) when there is no keyring or it would not store a key.
    private static func sealingKey(_ paths: FolioPaths, _ environment: [String: String]) throws -> SymmetricKey {
        // A keyring that fails (locked, damaged item) is not used: the key file is.
        if let keyring = keyring(paths, environment), case .success(let found) = Result(catching: { try keyring.lookup() }) {
            if let key = found { return SymmetricKey(data: key) }
            let existing = fileKey(paths)
            var key = existing ?? []
            if existing == nil {
                var generator = SystemRandomNumberGenerator()
                key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            if (try? keyring.store(key)) != nil, (try? keyring.lookup()) == key {
                if existing != nil { removeKeyFile(paths) }
                return SymmetricKey(data: key)
            }
        }
        return try BookmarkKey.load(path: keyPath(paths)).key
    }

    private static func fileKey(_ paths: FolioPaths) -> [UInt8]? {
        guard let bytes = try? FilePath(keyPath(paths)).readBytes(maximumSize: 64), bytes.count == 32 else { return nil }
        return bytes
    }

    /// Overwrites the key file and removes it (its bytes are not left in the file's blocks for a
    /// later reader of the disk, as far as the file system writes in place).
    private static func removeKeyFile(_ paths: FolioPaths) {
        let path = keyPath(paths)
        if let handle = FileHandle(forWritingAtPath: path) {
            handle.write(Data(count: 32))
            try? handle.synchronize()
            try? handle.close()
        }
        unlink(path)
    }
}
