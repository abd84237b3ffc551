#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioSystem
import Foundation
import SystemPackage
import UniformTypes

/// Where one item of a drive stands, as `folio drive status` shows it (Apple's ubiquitous-item
/// states: downloading status, isUploaded/isUploading, pinned, the last error).
package struct DriveItemStatus: Equatable, Sendable {
    package enum State: String, Sendable {
        /// A placeholder: listed here, content on the server.
        case cloud
        /// Downloaded and in sync.
        case local
        /// Local content the server does not have yet (new or changed): waiting to upload.
        case uploading
        /// A folder.
        case folder
    }

    package var state: State
    /// Whether it (or a folder above it) is pinned: kept downloaded.
    package var pinned: Bool
    /// Why the last pass that tried it deferred it.
    package var error: String?
}

extension SyncEngine {
    /// Downloads the placeholders at or below `paths` (each a file or a folder), reporting bytes to
    /// `progress`; returns the paths materialized. Cancelling the task stops it: what is not
    /// downloaded stays a placeholder, and a partial download leaves nothing behind. A single
    /// file's content is reported to `arriving` as it is written, where the provider can.
    /// `besidePass`: a pass runs meanwhile (``materializeBesidePass(_:progress:arriving:)``), and
    /// the board shows it, not this.
    func materialize(_ paths: [SyncPath], progress: Progress, arriving: ArrivingContents? = nil, besidePass: Bool = false) async throws -> [SyncPath] {
        let base = try await journal.base()
        let targets = try Self.files(within: paths, base: base, replica: replica).filter { base[$0]?.isPlaceholder == true }
        // Bytes (at least one per file). Each download reports to a progress of its own, mirrored
        // into this one: Foundation here traps when a child progress's total is set to 0, which a
        // provider does for an empty file.
        let sizes = targets.map { max(1, PlaceholderStub.read(at: replica.stubPath($0))?.size ?? 1) }
        progress.totalUnitCount = sizes.reduce(0, +)
        // Shown as a pass would be (the drive's lock keeps passes out meanwhile), unless beside one.
        if !besidePass { board.beginPass(actions: targets.count, bytes: progress.totalUnitCount) }
        defer { if !besidePass { board.endPass() } }
        try FileManager.default.createDirectory(atPath: replica.staging, withIntermediateDirectories: true)
        var request = FileProviderRequest(temporaryDirectory: URL(fileURLWithPath: replica.staging))
        if targets.count == 1 { request.arriving = arriving }
        var done: [SyncPath] = []
        var completed: Int64 = 0
        for (path, size) in zip(targets, sizes) {
            try Task.checkCancellation()
            let entry = base[path]!
            let file = Progress(totalUnitCount: 0)
            let mirror = Task { [completed] in
                while !Task.isCancelled {
                    progress.completedUnitCount = completed + min(size, max(0, file.completedUnitCount))
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { mirror.cancel() }
            board.began(path, .download, size: size, progress: file)
            defer { board.ended(path) }
            let (url, item, hash, _) = try await fetch(FileProviderItemIdentifier(entry.identifier), request: request, progress: file)
            defer { unlink(url.path) }
            // The rename and the stub's removal are file work, on its pool.
            let landed = try await SyncFileWork.run { [replica] in
                guard try replica.placeNew(url.path, at: path) else { return false }
                replica.removeStub(path)
                return true
            }
            guard landed else {
                throw FileProviderError(.cannotSynchronize, message: "“\(path)” appeared here while it downloaded; it was left as it is")
            }
            mirror.cancel()
            await mirror.value
            completed += size
            progress.completedUnitCount = completed
            if !besidePass { board.actionEnded(bytes: size) }
            // The folder's entry on disk before the base that records it (``flushPlaced(_:)``).
            try await SyncFileWork.run { [replica] in try LocalReplica.flushFolders([replica.absolute(path.parent ?? .root)]) }
            try await journal.record([
                (path, BaseEntry(isFolder: false, identifier: item.itemIdentifier.rawValue, version: item.itemVersion.contentVersion, hash: hash,
                    fingerprint: replica.fingerprint(path)))
            ])
            done.append(path)
        }
        return done
    }

    /// Evicts the downloaded files at or below `paths`: each becomes a placeholder again, its
    /// content only on the server. Refused (and left as it is) for a pinned file (``FileProviderError/Code/nonEvictable``)
    /// and for one whose content the server does not have (``FileProviderError/Code/unsyncedEdits``).
    /// Returns the paths evicted and the refusals.
    func evict(_ paths: [SyncPath]) async throws -> (evicted: [SyncPath], refused: [(SyncPath, FileProviderError)]) {
        let base = try await journal.base()
        let pins = try await journal.pins()
        var evicted: [SyncPath] = [], refused: [(SyncPath, FileProviderError)] = []
        // The file work (the checks, the stub, the move, the flush) on its pool, a file at a time.
        let files = try await SyncFileWork.run { [replica] in
            try FileManager.default.createDirectory(atPath: replica.staging, withIntermediateDirectories: true)
            return try Self.files(within: paths, base: base, replica: replica)
        }
        for path in files where base[path]?.isPlaceholder != true {
            if pins.contains(where: { path.isWithin($0) }) {
                refused.append((path, FileProviderError(.nonEvictable, message: "“\(path)” is pinned (folio drive unpin it first)")))
                continue
            }
            guard let entry = base[path] else {
                refused.append((path, FileProviderError(.unsyncedEdits, message: "“\(path)” has changes the server does not have yet (sync first)")))
                continue
            }
            let outcome = try await SyncFileWork.run { [replica] in try Self.evictFile(path, entry, replica) }
            switch outcome {
            case .refused(let error):
                refused.append((path, error))
            case .raced:
                continue
            case .evicted(let stub):
                try await journal.record([
                    (path, BaseEntry(isFolder: false, identifier: entry.identifier, version: entry.version, hash: entry.hash, fingerprint: stub,
                        isPlaceholder: true))
                ])
                evicted.append(path)
            }
        }
        return (evicted, refused)
    }

    /// What became of one file's eviction.
    private enum Eviction {
        /// A placeholder now, with the stub's fingerprint.
        case evicted(LocalFingerprint?)
        case refused(FileProviderError)
        /// The stub could not be written (a file appeared in its place): left as it is.
        case raced
    }

    /// Evicts the file at `path`, synced as `entry`: blocking file work, for the file-work pool.
    private static func evictFile(_ path: SyncPath, _ entry: BaseEntry, _ replica: LocalReplica) throws -> Eviction {
        guard let synced = entry.fingerprint, entry.hash != nil, replica.fingerprint(path) == synced else {
            return .refused(FileProviderError(.unsyncedEdits, message: "“\(path)” has changes the server does not have yet (sync first)"))
        }
        // Content an app still has open stays (Apple: nonEvictable, EBUSY).
        if let holder = ProcOpenFiles.holders(device: synced.device, inode: synced.inode).first {
            return .refused(FileProviderError(.nonEvictable, message: "“\(path)” is open in \(holder.name) (pid \(holder.pid))"))
        }
        // The stub first: a crash before the file is moved away leaves both, and the file wins.
        let type = UTType(filenameExtension: (path.name as NSString).pathExtension)?.identifier
        let stub = PlaceholderStub(name: path.name, size: synced.size, modified: synced.modified, contentType: type)
        guard try replica.writeStub(stub, at: path, besideFile: true) else { return .raced }
        let moved = replica.staging + "/evict-\(UUID().uuidString)"
        guard rename(replica.absolute(path), moved) == 0 else {
            replica.removeStub(path)
            return .refused(FileProviderError(.nonEvictable, message: "“\(path)”: \(String(cString: strerror(errno)))"))
        }
        // A writer that changed it after the check wins: it goes back, and stays.
        guard (try? FileStatus(path: FilePath(moved))).map(LocalReplica.fingerprint) == synced else {
            _ = try? FilePath(moved).rename(toNewItemAt: FilePath(replica.absolute(path)))
            replica.removeStub(path)
            return .refused(FileProviderError(.unsyncedEdits, message: "“\(path)” changed while it was evicted; it was kept"))
        }
        unlink(moved)
        // The folder's entries on disk before the base that records the placeholder (``flushPlaced(_:)``).
        try LocalReplica.flushFolders([replica.absolute(path.parent ?? .root)])
        return .evicted(replica.stubFingerprint(path))
    }

    /// The status of the items at or below `paths`.
    func status(_ paths: [SyncPath]) async throws -> [(SyncPath, DriveItemStatus)] {
        let base = try await journal.base()
        let pins = try await journal.pins()
        let errors = try await journal.errors()
        let scan = try replica.scan(base: base)
        return scan.entries.keys.filter { path in paths.contains { path.isWithin($0) } }.sorted().map { path in
            let local = scan.entries[path]!
            let state: DriveItemStatus.State
            if local.isFolder {
                state = .folder
            } else if local.isPlaceholder {
                state = .cloud
            } else if let entry = base[path], !entry.isPlaceholder, entry.hash != nil, entry.hash == local.hash || entry.fingerprint == local.fingerprint {
                state = .local
            } else {
                state = .uploading
            }
            return (path, DriveItemStatus(state: state, pinned: pins.contains { path.isWithin($0) }, error: errors[path]?.description))
        }
    }

    /// Pins (or unpins) `paths`: a pinned file, and every file below a pinned folder, is kept
    /// downloaded: the next pass downloads their placeholders, and eviction is refused.
    func setPinned(_ paths: [SyncPath], _ pinned: Bool) async throws {
        try await journal.setPinned(paths, pinned)
    }

    /// The files the journal or the replica knows at or below `paths`; a path neither knows is an error.
    static func files(within paths: [SyncPath], base: [SyncPath: BaseEntry], replica: LocalReplica) throws -> [SyncPath] {
        var result: Set<SyncPath> = []
        for requested in paths {
            let found = base.filter { !$0.value.isFolder && $0.key.isWithin(requested) }.map(\.key)
            let here = replica.fingerprint(requested) != nil
            let exists = here || requested == .root || access(replica.absolute(requested), F_OK) == 0 || access(replica.stubPath(requested), F_OK) == 0
            guard !found.isEmpty || exists || base[requested] != nil else {
                throw FileProviderError(.noSuchItem, message: "“\(requested)” is not in the drive")
            }
            result.formUnion(found)
            if here { result.insert(requested) }
        }
        return result.sorted()
    }
}
