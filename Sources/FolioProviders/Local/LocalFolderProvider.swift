#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Crypto
public import Folio
import FolioSystem
public import Foundation
import Logging
import SystemPackage

/// A provider over a folder of this machine (a NAS mount, a USB disk, another user's share): the
/// simplest provider, and the reference the validation suite is written against.
///
/// Items are known by their document identity (the `user.folio.id` attribute, given on first sight;
/// a copy that kept its original's identity gets a new one). The content version is the content's
/// SHA-256, so a `touch` is not a change; the metadata version is a digest of name, parent, mode and
/// modification time. Changes made to the folder by anyone are found by comparing listings, and
/// anchors are generations of this process's history: a new process expires the old anchors, and
/// the system enumerates once more.
public final class LocalFolderProvider: FileProvider, @unchecked Sendable {
    /// The folder served.
    public let root: String
    /// Items per page.
    public let pageSize: Int

    // Everything below is touched only on `queue`.
    private let queue = DispatchQueue(label: "folio.provider.local")
    var entries: [FileProviderItemIdentifier: Entry] = [:] {
        didSet { childIndex = nil }
    }
    /// Each folder's children, built from ``entries`` when first needed after a change.
    private var childIndex: [FileProviderItemIdentifier: [FileProviderItemIdentifier]]?
    /// Identities by path, keyed by the path's bytes: Swift's `String` equality treats NFC and NFD
    /// spellings as one, and the file system does not.
    var pathIndex: [[UInt8]: FileProviderItemIdentifier] = [:]
    private var hashes: [String: Data] = [:]
    private var changes = ProviderChangeLog()
    private var scanned = false
    private let logger = Logger(label: "folio.provider.local")

    /// What a listing found of one item.
    struct Entry {
        var identifier: FileProviderItemIdentifier
        var parent: FileProviderItemIdentifier
        var name: String
        var path: String
        var status: FileStatus
        var linkTarget: String?

        /// Whether a listing that found `other` at the same identity saw a change.
        func differs(from other: Entry) -> Bool {
            parent != other.parent || !name.utf8.elementsEqual(other.name.utf8) || status.size != other.status.size
                || status.modificationTime != other.status.modificationTime || status.changeTime != other.status.changeTime
                || status.mode != other.status.mode || status.inode != other.status.inode || linkTarget?.utf8.elementsEqual(other.linkTarget?.utf8 ?? "".utf8) == false
        }
    }

    /// Names the provider uses for its own temporary files; listings leave them out.
    static let temporaryPrefix = ".folio-tmp-"
    /// How long a temporary file may go unwritten before a listing takes it for a dead write's.
    static let staleTemporaryAge: Double = 600

    /// A provider over `root`, which must be a folder.
    ///
    /// - Throws: `CocoaError.fileReadNoSuchFile` when `root` is not a folder.
    public init(root: String, pageSize: Int = 200) throws {
        let canonical = (try? FileStatus.canonicalPath(root)) ?? root
        guard (try? FileStatus(path: FilePath(canonical), followSymlinks: true))?.kind == .directory else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: root, NSLocalizedDescriptionKey: "\(root) is not a folder"])
        }
        self.root = canonical
        self.pageSize = pageSize
    }

    /// Runs `body` on the provider's queue, off the caller's thread.
    func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    // MARK: Listing

    /// Lists the whole tree again, giving identities to new items and recording what changed.
    func refresh() {
        var found: [FileProviderItemIdentifier: Entry] = [:]
        var folders: [String: FileProviderItemIdentifier] = [root: .rootContainer]
        DirectoryScanner().scan(
            root,
            visit: { entry in
                guard let parent = folders[entry.folder],
                    let made = self.entry(name: entry.name, path: entry.path, status: entry.status, parent: parent, taken: found)
                else { return false }
                found[made.identifier] = made
                if entry.status.kind == .directory { folders[entry.path] = made.identifier }
                return true
            },
            skipped: { path, reason in self.logger.warning("left out of the listing", metadata: ["path": "\(path)", "reason": "\(reason)"]) })
        for (identifier, old) in entries where found[identifier] == nil || found[identifier]!.differs(from: old) == true {
            if found[identifier] == nil { changes.recordDeletion(identifier) } else { changes.recordUpdate(identifier) }
        }
        for identifier in found.keys where entries[identifier] == nil { changes.recordUpdate(identifier) }
        entries = found
        pathIndex = Dictionary(uniqueKeysWithValues: found.values.map { (Array($0.path.utf8), $0.identifier) })
        scanned = true
    }

    /// The entry for one listed item, or nil for what the provider does not serve (its temporary
    /// files, devices, sockets, pipes).
    private func entry(
        name: String, path: String, status: FileStatus, parent: FileProviderItemIdentifier, taken: [FileProviderItemIdentifier: Entry]
    ) -> Entry? {
        guard !name.hasPrefix(Self.temporaryPrefix) else {
            // A write that died (an upload killed mid-way) leaves its temporary file; once nothing
            // has written to it for a while, the listing removes it.
            if status.kind == .regular, Date().timeIntervalSince1970 - status.modificationTime > Self.staleTemporaryAge {
                if unlink(path) == 0 { logger.notice("removed a temporary file a write left behind", metadata: ["path": "\(path)"]) }
            }
            return nil
        }
        switch status.kind {
        case .regular, .directory:
            var identifier = FileProviderItemIdentifier(
                (try? DocumentIdentity.identifier(ofItemAt: path, creating: true)) ?? "inode-\(status.device)-\(status.inode)")
            if let other = taken[identifier], other.status.inode != status.inode {
                // A copy that kept its original's identity (cp -a, rsync -X): give it its own.
                let fresh = UUID().uuidString.lowercased()
                try? FilePath(path).setExtendedAttribute(named: DocumentIdentity.attribute, to: Array(fresh.utf8))
                identifier = FileProviderItemIdentifier(fresh)
            }
            return Entry(identifier: identifier, parent: parent, name: name, path: path, status: status)
        case .symbolicLink:
            return Entry(
                identifier: FileProviderItemIdentifier("inode-\(status.device)-\(status.inode)"), parent: parent,
                name: name, path: path, status: status, linkTarget: FilePath(path).symbolicLinkTarget())
        default:
            return nil
        }
    }

    /// The entry of `identifier`, listing again once if it is not known or not where it was.
    func entry(_ identifier: FileProviderItemIdentifier) throws -> Entry {
        if identifier == .rootContainer, let status = try? FileStatus(path: FilePath(root), followSymlinks: true) {
            return Entry(identifier: .rootContainer, parent: .rootContainer, name: "", path: root, status: status)
        }
        if !scanned { refresh() }
        if let entry = entries[identifier], let status = try? FileStatus(path: FilePath(entry.path)), status.inode == entry.status.inode {
            return entry
        }
        refresh()
        guard let entry = entries[identifier] else { throw FileProviderError.noSuchItem(identifier) }
        return entry
    }

    /// Records one item this provider just wrote, without listing everything again.
    @discardableResult
    func remember(path: String, parent: FileProviderItemIdentifier) throws -> Entry {
        if !scanned { refresh() }
        let status = try FileStatus(path: FilePath(path))
        let name = String(path.split(separator: "/").last ?? "")
        var others = entries
        if let previous = pathIndex[Array(path.utf8)] { others[previous] = nil }
        guard let entry = entry(name: name, path: path, status: status, parent: parent, taken: others) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        if let old = entries[entry.identifier], !old.path.utf8.elementsEqual(path.utf8) { pathIndex[Array(old.path.utf8)] = nil }
        entries[entry.identifier] = entry
        pathIndex[Array(path.utf8)] = entry.identifier
        changes.recordUpdate(entry.identifier)
        return entry
    }

    /// The identifiers of `folder`'s children.
    func children(of folder: FileProviderItemIdentifier) -> [FileProviderItemIdentifier] {
        if childIndex == nil {
            var index: [FileProviderItemIdentifier: [FileProviderItemIdentifier]] = [:]
            for entry in entries.values { index[entry.parent, default: []].append(entry.identifier) }
            childIndex = index
        }
        return childIndex?[folder] ?? []
    }

    // MARK: Items

    /// The item an entry stands for.
    func record(_ entry: Entry) throws -> FileProviderItemRecord {
        let status = entry.status
        let type: UTType
        var contentVersion = Data()
        var childCount: Int?
        switch status.kind {
        case .directory:
            type = .folder
            childCount = children(of: entry.identifier).count
        case .symbolicLink:
            type = .symbolicLink
            contentVersion = Data(SHA256.hash(data: Data((entry.linkTarget ?? "").utf8)))
        default:
            type = .ofFile(named: entry.name)
            contentVersion = try contentHash(entry)
        }
        var flags: FileProviderFileSystemFlags = []
        if status.mode & 0o400 != 0 { flags.insert(.userReadable) }
        if status.mode & 0o200 != 0 { flags.insert(.userWritable) }
        if status.mode & 0o100 != 0, status.kind == .regular { flags.insert(.userExecutable) }
        if entry.name.hasPrefix(".") { flags.insert(.hidden) }
        let metadata = "\(entry.parent.rawValue)\u{0}\(entry.name)\u{0}\(status.mode)\u{0}\(status.modificationTime)"
        return FileProviderItemRecord(
            itemIdentifier: entry.identifier, parentItemIdentifier: entry.parent, filename: entry.name, contentType: type,
            capabilities: .allowsAll,
            itemVersion: FileProviderItemVersion(contentVersion: contentVersion, metadataVersion: Data(SHA256.hash(data: Data(metadata.utf8)))),
            size: status.kind == .regular ? status.size : nil, childCount: childCount,
            contentModificationDate: Date(timeIntervalSince1970: status.modificationTime), fileSystemFlags: flags,
            symlinkTargetPath: entry.linkTarget)
    }

    /// The SHA-256 of a file's content, from a cache keyed by its status.
    private func contentHash(_ entry: Entry) throws -> Data {
        let status = entry.status
        let key = "\(status.device):\(status.inode):\(status.size):\(status.modificationTime):\(status.changeTime)"
        if let known = hashes[key] { return known }
        let digest = try ContentDigest.sha256(ofFileAt: entry.path)
        if hashes.count > 100_000 { hashes.removeAll() }
        hashes[key] = digest
        return digest
    }

    // MARK: FileProvider

    public func item(for identifier: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> any FileProviderItem {
        try await perform { try self.record(self.entry(identifier)) }
    }

    public func enumerateItems(
        in container: FileProviderItemIdentifier, startingAt page: FileProviderPage, request: FileProviderRequest
    ) async throws -> FileProviderItemPage {
        try await perform {
            if page.isInitial || !self.scanned { self.refresh() }
            let candidates: [Entry]
            let key: (Entry) -> String
            if container == .workingSet {
                candidates = Array(self.entries.values)
                key = \.identifier.rawValue
            } else {
                guard try self.entry(container).status.kind == .directory else {
                    throw FileProviderError(.noSuchItem, message: "\(container) is not a folder")
                }
                candidates = self.children(of: container).compactMap { self.entries[$0] }
                key = \.name
            }
            let (slice, next) = try ProviderPaging.slice(ProviderPaging.sorted(candidates, key: key), key: key, after: page, limit: self.pageSize)
            return FileProviderItemPage(items: try slice.map { try self.record($0) }, nextPage: next)
        }
    }

    public func currentSyncAnchor(for container: FileProviderItemIdentifier, request: FileProviderRequest) async throws
        -> FileProviderSyncAnchor
    {
        try await perform {
            self.refresh()
            return self.changes.anchor
        }
    }

    public func enumerateChanges(
        in container: FileProviderItemIdentifier, from anchor: FileProviderSyncAnchor, request: FileProviderRequest
    ) async throws -> FileProviderChangeBatch {
        try await perform {
            // An anchor this history cannot answer is expired before any listing is paid for.
            guard self.changes.generation(of: anchor) != nil else {
                throw FileProviderError(.syncAnchorExpired, message: "the sync anchor is expired or not this provider's")
            }
            self.refresh()
            let found = try self.changes.changes(since: anchor, limit: self.pageSize)
            let updated = try found.updated.compactMap { identifier in try self.entries[identifier].map { try self.record($0) } }
                .filter { container == .workingSet || $0.parentItemIdentifier == container }
            return FileProviderChangeBatch(
                updatedItems: updated, deletedItemIdentifiers: found.deleted, anchor: found.anchor, moreComing: found.moreComing)
        }
    }

    public func fetchContents(
        for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest, progress: Progress
    ) async throws -> (contents: URL, item: any FileProviderItem) {
        let destination = request.fetchDestination()
        return try await withTaskCancellationHandler {
            try await perform {
                let entry = try self.entry(identifier)
                guard entry.status.kind == .regular else {
                    throw FileProviderError(.noSuchItem, message: "\(entry.name) has no content to fetch")
                }
                var item = try self.record(entry)
                if let version, version.contentVersion != item.itemVersion.contentVersion {
                    throw FileProviderError(.versionNoLongerAvailable, message: "\(entry.name) changed since that version")
                }
                progress.totalUnitCount = entry.status.size
                let digest = try ContentDigest.copy(from: entry.path, to: destination, progress: progress).digest
                // What was copied is what is described: a writer that changed the file meanwhile is caught.
                if digest != item.itemVersion.contentVersion {
                    let copied = try self.remember(path: entry.path, parent: entry.parent)
                    item = try self.record(copied)
                    if digest != item.itemVersion.contentVersion {
                        unlink(destination)
                        throw FileProviderError(.versionNoLongerAvailable, message: "\(entry.name) changed while it was read")
                    }
                }
                return (URL(fileURLWithPath: destination, isDirectory: false), item)
            }
        } onCancel: {
            progress.cancel()
        }
    }
}
