import FolioSystem
import Logging
package import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension VersionStore {
    /// The name of this machine, for `localizedNameOfSavingComputer`.
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Stores the current contents of the item at `path` (or of `source`) as a new version.
    /// Identical contents already kept as a non-conflict version are not added again. `shown` is
    /// where users see the item, when not at `path` (the drive's replica beneath its mount); `seen`
    /// where the manifest records its identity was seen, when `path` is a descriptor's
    /// (`/proc/self/fd`: the item a check resolved).
    @discardableResult
    package func addVersion(
        ofItemAt path: String, contentsOf source: String? = nil, shownAt shown: String? = nil, seenAt seen: String? = nil, kind: VersionRecord.Kind,
        isConflict: Bool = false
    ) throws -> (identity: String, record: VersionRecord) {
        let (identity, status, _) = try identified(ofItemAt: path, creating: true, seenAt: seen)
        let origin = source ?? path
        let modified = (try? FileStatus(path: FilePath(origin), followSymlinks: true))?.modificationTime ?? Date().timeIntervalSince1970
        let (hash, size) = try storeObject(copying: origin)
        let record = try insert(
            hash: hash, size: size, modified: modified, identity: identity, path: shown ?? path, seen: (seen ?? path, status), kind: kind,
            isConflict: isConflict)
        collectIfDue()
        return (identity, record)
    }

    /// Stores `data` as a new version of the item at `path`.
    @discardableResult
    package func addVersion(
        ofItemAt path: String, data: Data, modified: Date = Date(), kind: VersionRecord.Kind, isConflict: Bool = false
    ) throws -> (identity: String, record: VersionRecord) {
        let (identity, status) = try self.identity(ofItemAt: path, creating: true)
        let hash = try storeObject(data)
        let record = try insert(
            hash: hash, size: Int64(data.count), modified: modified.timeIntervalSince1970, identity: identity, path: path, seen: (path, status),
            kind: kind, isConflict: isConflict)
        collectIfDue()
        return (identity, record)
    }

    private func insert(
        hash: String, size: Int64, modified: Double, identity: String, path: String, seen: (path: String, status: FileStatus),
        kind: VersionRecord.Kind, isConflict: Bool
    ) throws -> VersionRecord {
        try update(identity, path: path, seen: seen) { manifest in
            if !isConflict, let existing = manifest.versions.last(where: { $0.object == hash && !$0.isConflict }) {
                return existing
            }
            let record = VersionRecord(
                id: UUID().uuidString.lowercased(), object: hash, size: size, modificationDate: modified,
                addedAt: Date().timeIntervalSince1970, savingComputer: Self.hostName, name: (path as NSString).lastPathComponent,
                kind: kind, isConflict: isConflict, isResolved: false)
            manifest.versions.append(record)
            return record
        }
    }

    /// The versions of the item at `path`, oldest first (none when it has no identity yet, or is a
    /// copy of a document: ``identity(ofItemAt:creating:)``).
    package func versions(ofItemAt path: String, seenAt seen: String? = nil) throws -> (identity: String, records: [VersionRecord]) {
        let found = try identified(ofItemAt: path, creating: false, seenAt: seen)
        return (found.identity, found.manifest?.versions ?? [])
    }

    /// The identity the store knows the item at `path` by, and the item's status. The identity
    /// attribute decides only with what a copy cannot carry: when the manifest recorded the
    /// identity on another inode of the same file system that still holds it
    /// (``DocumentIdentity/isSameDocument(_:device:inode:)``), the item is a copy and is given an
    /// identity of its own — it inherits no versions. When the identity moved to this inode (a save
    /// by rename, a download), the manifest records it here. On another device (the drive seen
    /// through its mount rather than in its replica, or a move across file systems) the identity
    /// decides, as before manifests recorded inodes.
    package func identity(ofItemAt path: String, creating: Bool) throws -> (identity: String, status: FileStatus) {
        let found = try identified(ofItemAt: path, creating: creating)
        return (found.identity, found.status)
    }

    /// ``identity(ofItemAt:creating:)``, with the identity's manifest as read on the way (nil: none).
    private func identified(
        ofItemAt path: String, creating: Bool, seenAt seen: String? = nil
    ) throws -> (identity: String, status: FileStatus, manifest: VersionManifest?) {
        let identity = try DocumentIdentity.identifier(ofItemAt: path, creating: creating)
        guard let status = try? FileStatus(path: FilePath(path), followSymlinks: true) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        let manifest = try self.manifest(identity)
        // Only on the recorded device: the drive's files have one inode in the replica and another
        // through the mount (each process sees its own view), and a document moved to another file
        // system has left its recorded inode behind anyway.
        guard !identity.hasPrefix("inode-"), let reference = manifest?.reference, reference.device == status.device, reference.inode != status.inode
        else { return (identity, status, manifest) }
        guard DocumentIdentity.isSameDocument(reference, device: status.device, inode: status.inode) else {
            let fresh = DocumentIdentity.reidentify(itemAt: path, status: status)
            logger.info("a copy of a document was given an identity of its own", metadata: ["path": "\(path)"])
            return (fresh, status, try self.manifest(fresh))
        }
        try update(identity, path: nil, seen: (seen ?? path, status)) { _ in }
        return (identity, status, manifest)
    }

    /// Marks a conflict version resolved.
    package func markResolved(_ id: String, identity: String, path: String) throws {
        try update(identity, path: path) { manifest in
            guard let index = manifest.versions.firstIndex(where: { $0.id == id }) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no version \(id)"])
            }
            manifest.versions[index].isResolved = true
        }
    }

    /// Removes one version.
    package func remove(_ id: String, identity: String, path: String) throws {
        try update(identity, path: path) { manifest in
            guard let index = manifest.versions.firstIndex(where: { $0.id == id }) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no version \(id)"])
            }
            manifest.versions.remove(at: index)
        }
    }

    /// Removes every stored version of the item at `path` (its current contents stay).
    package func removeAll(ofItemAt path: String) throws {
        let identity = try self.identity(ofItemAt: path, creating: false).identity
        guard try manifest(identity) != nil else { return }
        try update(identity, path: path) { manifest in manifest.versions.removeAll() }
    }

    /// Puts a version's contents in place of the item at `path`, safely: the contents are checked
    /// against their hash, written to a temporary file beside the item with the item's mode and
    /// `user.` attributes (its identity among them), flushed, and renamed over it.
    package func restore(_ record: VersionRecord, to path: String, attributesFrom source: String? = nil) throws {
        let data = try readObject(record.object)
        let from = source ?? path
        let status = try? FileStatus(path: FilePath(from), followSymlinks: true)
        try SafeSave.write(data, to: path, preservingAttributesOf: status == nil ? nil : from, mode: status?.mode)
    }
}

extension VersionStore {
    /// Every stored version of every document, with the path the document was last seen at
    /// (a deleted document's versions included). Damaged manifests are left out.
    package func allVersions() -> [(identity: String, lastKnownPath: String, record: VersionRecord)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: itemsDirectory)) ?? []
        let identities = names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter(DocumentIdentity.isValid)
        var result: [(identity: String, lastKnownPath: String, record: VersionRecord)] = []
        for identity in identities.sorted() {
            guard let manifest = try? manifest(identity) else { continue }
            for record in manifest.versions { result.append((identity, manifest.lastKnownPath, record)) }
        }
        return result
    }
}

extension VersionStore {
    /// Where the documents with unresolved conflict versions were last seen (the browser's
    /// Conflicts list and badges): one read of each manifest in the store.
    package func documentsWithUnresolvedConflicts() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: itemsDirectory)) ?? []
        return names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter(DocumentIdentity.isValid).compactMap { identity in
            guard let manifest = try? manifest(identity), manifest.versions.contains(where: { $0.isConflict && !$0.isResolved }) else { return nil }
            return manifest.lastKnownPath
        }
    }
}
