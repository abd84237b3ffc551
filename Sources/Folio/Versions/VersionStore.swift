import Crypto
import FolioSystem
package import Foundation
package import Logging
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Why the version store refused.
package struct VersionStoreError: Error, CustomStringConvertible, Sendable {
    package var description: String
}

/// The store behind `FileVersion`: `$XDG_DATA_HOME/folio/Versions/`.
///
/// - `objects/ab/<sha256>`: contents, stored once per distinct content, written to a temporary file,
///   flushed and renamed, and checked against their hash whenever they are read back.
/// - `items/<identity>.json`: one manifest per document, keyed by the document's stable identity, so
///   versions follow renames; replaced atomically under the item's lock (`items/<identity>.lock`,
///   an OFD lock, so processes and threads serialize).
///
/// A manifest that does not parse is moved aside (`.corrupt-<time>`) and reported, never silently
/// rewritten. Retention keeps at most `maximumVersions` non-conflict versions per document and, over
/// `maximumBytes` in all, drops the oldest non-conflict versions first; unresolved conflicts are
/// never dropped.
package final class VersionStore: Sendable {
    /// Retention limits.
    package struct Limits: Sendable {
        package var maximumVersions = 64
        package var maximumBytes: Int64 = 4 << 30
        package init() {}
    }

    package let directory: String
    package let limits: Limits
    let logger: Logger

    package init(directory: String, limits: Limits = Limits(), logger: Logger = Logger(label: "folio.versions")) {
        self.directory = directory
        self.limits = limits
        self.logger = logger
    }

    /// The store of this user (`FolioPaths().versionsDirectory`).
    package static let shared = VersionStore(directory: FolioPaths().versionsDirectory)

    /// A store for the current task only (tests use private stores).
    @TaskLocal package static var override: VersionStore?

    /// The store `FileVersion` and `Document` use.
    package static var current: VersionStore { override ?? shared }

    var itemsDirectory: String { directory + "/items" }
    var objectsDirectory: String { directory + "/objects" }

    // MARK: Objects

    /// Where the object with `hash` lives.
    package func objectPath(_ hash: String) -> String {
        objectsDirectory + "/" + hash.prefix(2) + "/" + hash
    }

    /// Stores `data`, once per distinct content; returns its hash.
    package func storeObject(_ data: Data) throws -> String {
        let hash = SHA256.hash(data: data).hexadecimal
        let path = objectPath(hash)
        if Self.refresh(path) { return hash }
        try writeObject(to: path) { fd in try fd.writeAll(data) }
        return hash
    }

    /// Stores the contents of the file at `source` (streamed: a large file need not fit in memory).
    package func storeObject(copying source: String) throws -> (hash: String, size: Int64) {
        guard access(source, R_OK) == 0 else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: source]) }
        try createDirectory(objectsDirectory + "/tmp")
        let temporary = objectsDirectory + "/tmp/" + UUID().uuidString
        let (digest, size) = try ContentDigest.copy(from: source, to: temporary)
        do {
            let hash = digest.hexadecimal
            let path = objectPath(hash)
            if Self.refresh(path) {
                unlink(temporary)
            } else {
                try createDirectory((path as NSString).deletingLastPathComponent)
                guard rename(temporary, path) == 0 else { throw Errno(rawValue: errno) }
            }
            return (hash, size)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Whether the object at `path` is there, its time set to now when it is: a collection spares
    /// objects younger than its grace, so contents shared with a version being added right now are
    /// never removed under it (`collectGarbage` checks the time again once the object is set aside).
    static func refresh(_ path: String) -> Bool {
        utimensat(AT_FDCWD, path, nil, 0) == 0
    }

    private func writeObject(to path: String, _ body: (SystemPackage.FileDescriptor) throws -> Void) throws {
        try createDirectory(objectsDirectory + "/tmp")
        let temporary = objectsDirectory + "/tmp/" + UUID().uuidString
        let output = try SystemPackage.FileDescriptor.open(
            FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: [.ownerReadWrite])
        do {
            try output.closeAfter {
                try body(output)
                guard fsync(output.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
            try createDirectory((path as NSString).deletingLastPathComponent)
            guard rename(temporary, path) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Reads an object back, checking it against its hash.
    ///
    /// - Throws: `CocoaError.fileReadCorruptFile` when the bytes no longer match (a damaged store).
    package func readObject(_ hash: String) throws -> Data {
        let path = objectPath(hash)
        guard let bytes = try? FilePath(path).readBytes(maximumSize: Int.max - 1) else {
            throw CocoaError(
                .fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "version contents missing from the store"])
        }
        let data = Data(bytes)
        guard SHA256.hash(data: data).hexadecimal == hash else {
            logger.error("corrupt version object", metadata: ["object": "\(path)"])
            throw CocoaError(
                .fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "version contents are damaged (hash mismatch)"])
        }
        return data
    }

    // MARK: Manifests

    func manifestPath(_ identity: String) -> String { itemsDirectory + "/" + identity + ".json" }

    /// The document identity a file of the items folder is the manifest of, or nil for other files
    /// (locks, temporaries, manifests moved aside).
    static func identity(ofManifestNamed name: String) -> String? {
        guard name.hasSuffix(".json") else { return nil }
        let identity = String(name.dropLast(5))
        return DocumentIdentity.isValid(identity) ? identity : nil
    }

    /// The manifest of a document, or nil when it has none. A manifest that does not parse is moved
    /// aside and reported (unless `movingAsideIfDamaged` is false: an observer only reads).
    func manifest(_ identity: String, movingAsideIfDamaged: Bool = true) throws -> VersionManifest? {
        precondition(DocumentIdentity.isValid(identity))
        let path = manifestPath(identity)
        let bytes: [UInt8]?
        do {
            bytes = try FilePath(path).readBytes(maximumSize: Self.maximumManifestSize)
        } catch {
            return nil  // no manifest (or unreadable: treated as none, never rewritten blindly)
        }
        do {
            guard let bytes else { throw VersionStoreError(description: "larger than \(Self.maximumManifestSize) bytes") }
            let manifest = try JSONDecoder().decode(VersionManifest.self, from: Data(bytes))
            guard manifest.format == 1, manifest.identifier == identity,
                manifest.versions.allSatisfy({ Self.isHash($0.object) && DocumentIdentity.isValid($0.id) })
            else {
                throw VersionStoreError(description: "unexpected format or fields")
            }
            return manifest
        } catch {
            guard movingAsideIfDamaged else { throw error }
            let aside = path + ".corrupt-\(Int(Date().timeIntervalSince1970))"
            rename(path, aside)
            logger.error("corrupt version manifest moved aside", metadata: ["manifest": "\(path)", "aside": "\(aside)", "error": "\(error)"])
            throw CocoaError(
                .fileReadCorruptFile,
                userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "the version store's entry for this document is damaged; it was moved to \(aside)"])
        }
    }

    /// The largest manifest read (64 MiB: far beyond 64 versions' worth).
    static let maximumManifestSize = 64 << 20

    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Runs `body` on a document's manifest under its lock and writes the result back atomically.
    /// `path` becomes the manifest's last known path (nil keeps it); `seen` records the item the
    /// identity is on now (its real path, device and inode).
    @discardableResult
    func update<T>(
        _ identity: String, path: String?, seen: (path: String, status: FileStatus)? = nil, _ body: (inout VersionManifest) throws -> T
    ) throws -> T {
        try createDirectory(itemsDirectory)
        let lock = try SystemPackage.FileDescriptor.open(
            FilePath(itemsDirectory + "/" + identity + ".lock"), .readWrite, options: [.create, .closeOnExec],
            permissions: [.ownerReadWrite])
        defer { try? lock.close() }
        try lock.lock(.exclusive)
        var manifest = try self.manifest(identity) ?? VersionManifest(identifier: identity, lastKnownPath: path ?? seen?.path ?? "", versions: [])
        if let path { manifest.lastKnownPath = path }
        if let seen {
            manifest.device = seen.status.device
            manifest.inode = seen.status.inode
            manifest.recordedPath = seen.path
        }
        let result = try body(&manifest)
        prune(&manifest)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(try encoder.encode(manifest), to: manifestPath(identity))
        return result
    }

    /// Keeps at most `maximumVersions` versions that are not unresolved conflicts (the oldest go).
    private func prune(_ manifest: inout VersionManifest) {
        let droppable = manifest.versions.enumerated().filter { !($0.element.isConflict && !$0.element.isResolved) }
        let excess = droppable.count - limits.maximumVersions
        guard excess > 0 else { return }
        let drop = Set(droppable.sorted { $0.element.addedAt < $1.element.addedAt }.prefix(excess).map(\.offset))
        manifest.versions = manifest.versions.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
    }

    /// Makes the store's folder and its items folder, each one only the user may enter; an existing
    /// one is set to 0700 too (older versions left them 0755, and the names of the user's
    /// documents are in them).
    package func makePrivateFolders() throws {
        try FolioPaths.makePrivateDirectory(directory)
        try FolioPaths.makePrivateDirectory(itemsDirectory)
    }

    private func createDirectory(_ path: String) throws {
        if access(path, F_OK) == 0 { return }
        if access(directory, F_OK) != 0 { try makePrivateFolders() }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    private func open(_ path: String) throws -> SystemPackage.FileDescriptor {
        do {
            return try SystemPackage.FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
