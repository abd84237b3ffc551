#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioSystem
import Foundation
import SystemPackage

/// A domain's local replica folder: what it holds (scanned with raw directory reads, each file
/// hashed only when its fingerprint changed since the base), and the file operations the sync
/// engine makes in it, each one safe against a writer working at the same moment.
struct LocalReplica: Sendable {
    /// The replica's root folder.
    let root: String

    /// The file in the root that marks it as this domain's replica; without it nothing is synced.
    static let markerName = ".folio-replica"
    /// The folder in the root for downloads in flight (same file system, so they land by rename).
    static let stagingName = ".folio-staging"

    /// Names the replica never syncs as content (placeholder stubs stand for the files they name).
    static func isPrivate(_ name: String) -> Bool {
        name == markerName || name == stagingName || name.hasPrefix(".folio-upload-") || PlaceholderStub.isStubName(name)
    }

    /// The replica as scanned.
    struct Scan {
        var entries: [SyncPath: LocalEntry] = [:]
        /// Folders that could not be read: what lies below them is unknown, not deleted.
        var unreadable: [SyncPath] = []
        /// Files whose placeholder is still beside them (the file wins; the stub is removed).
        var shadowedStubs: [SyncPath] = []
        /// Whether the replica is exactly as the base the scan was given records it: the same paths,
        /// a folder where the base has a folder, each file with the base's fingerprint, no
        /// placeholder and nothing unreadable. The planner then compares only the server's side
        /// (``SyncPlanner/plan(local:remote:base:unreadable:merging:localMatchesBase:keepsLocal:)``).
        var matchesBase = false
    }

    func absolute(_ path: SyncPath) -> String { root + "/" + path.text }

    var staging: String { root + "/" + Self.stagingName }

    /// How many folders a pass's downloads are spread over in the staging folder
    /// (``FileProviderRequest/fetchFolders``): as many as run at once.
    static let fetchFolders = 16

    /// Makes the staging folder and its fetch folders (a sweep keeps them, emptied; a file left
    /// where one belongs goes); returns the request a pass's provider calls carry.
    func makeStaging() throws -> FileProviderRequest {
        for index in -1..<Self.fetchFolders {
            let folder = index < 0 ? staging : staging + "/" + FileProviderRequest.fetchFolderName(index)
            if mkdir(folder, 0o700) == 0 { continue }
            if errno == EEXIST {
                if (try? FileStatus(path: FilePath(folder)))?.kind == .directory { continue }
                // A file left where the folder belongs.
                unlink(folder)
                if mkdir(folder, 0o700) == 0 { continue }
            }
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: folder, NSLocalizedDescriptionKey: "cannot make \(folder): \(String(cString: strerror(errno)))"])
        }
        var request = FileProviderRequest(temporaryDirectory: URL(fileURLWithPath: staging))
        request.fetchFolders = Self.fetchFolders
        return request
    }

    /// Scans the replica; a file whose fingerprint matches its base keeps the base's hash, one that
    /// changed is hashed, and a new one is hashed later, when it is sent or compared.
    func scan(base: [SyncPath: BaseEntry]) throws -> Scan {
        var scan = Scan()
        var rootError: DirectoryScanner.Skip?
        var stubs: [(SyncPath, LocalFingerprint)] = []
        // Entries exactly as the base has them (found with the lookup each one needs anyway).
        var asInBase = 0
        let prefix = root.utf8.count + 1
        DirectoryScanner().scan(root) { entry in
            let path = SyncPath(String(decoding: entry.path.utf8.dropFirst(prefix), as: UTF8.self))
            if entry.status.kind == .regular, PlaceholderStub.isStubName(entry.name) {
                // Only a real stub stands for a file; another file with the suffix is not synced.
                if entry.status.size <= PlaceholderStub.maximumSize, PlaceholderStub.read(at: entry.path) != nil {
                    stubs.append((SyncPath(PlaceholderStub.documentName(ofStub: path.text)), Self.fingerprint(entry.status)))
                }
                return false
            }
            if entry.folder == root, Self.isPrivate(entry.name) { return false }
            switch entry.status.kind {
            case .directory:
                scan.entries[path] = LocalEntry(isFolder: true)
                if base[path]?.isFolder == true { asInBase += 1 }
                return true
            case .regular:
                let fingerprint = Self.fingerprint(entry.status)
                guard let known = base[path] else {
                    scan.entries[path] = LocalEntry(isFolder: false, fingerprint: fingerprint)
                    return false
                }
                // A file that cannot be read is unknown: it is neither synced nor deleted.
                guard let hash = known.fingerprint == fingerprint ? known.hash : try? ContentDigest.sha256(ofFileAt: entry.path).hexadecimal else {
                    scan.unreadable.append(path)
                    return false
                }
                scan.entries[path] = LocalEntry(isFolder: false, hash: hash, fingerprint: fingerprint)
                if !known.isFolder, !known.isPlaceholder, known.fingerprint == fingerprint { asInBase += 1 }
                return false
            default:
                return false
            }
        } skipped: { skippedPath, reason in
            if skippedPath == root { rootError = reason }
            if skippedPath.utf8.count > prefix { scan.unreadable.append(SyncPath(String(decoding: skippedPath.utf8.dropFirst(prefix), as: UTF8.self))) }
        }
        if let rootError { throw SyncStop.replicaUnreadable(root, "\(rootError)") }
        for (path, fingerprint) in stubs {
            if scan.entries[path] != nil {
                scan.shadowedStubs.append(path)
            } else {
                // A placeholder's fingerprint is its stub's: a renamed stub is a moved file.
                scan.entries[path] = LocalEntry(isFolder: false, hash: base[path]?.hash, fingerprint: fingerprint, isPlaceholder: true)
            }
        }
        // Each entry counted has a path of the base's, so equal counts are the base's paths exactly.
        scan.matchesBase = stubs.isEmpty && scan.unreadable.isEmpty && asInBase == base.count && scan.entries.count == base.count
        return scan
    }

    static func fingerprint(_ status: FileStatus) -> LocalFingerprint {
        LocalFingerprint(device: status.device, inode: status.inode, size: status.size, modified: status.modificationTime)
    }

    /// The fingerprint of the file at `path` now (nil when it is not a regular file).
    func fingerprint(_ path: SyncPath) -> LocalFingerprint? {
        fileStatus(path).map(Self.fingerprint)
    }

    /// The status of the file at `path` now (nil when it is not a regular file).
    func fileStatus(_ path: SyncPath) -> FileStatus? {
        guard let status = try? FileStatus(path: FilePath(absolute(path))), status.kind == .regular else { return nil }
        return status
    }

    /// Flushes the file at `path` to disk.
    static func flush(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }

    /// Flushes each folder's entries to disk (a folder that is gone meanwhile is skipped: what
    /// it held is gone with it).
    static func flushFolders(_ folders: some Sequence<String>) throws {
        for folder in folders {
            let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else {
                if errno == ENOENT || errno == ENOTDIR { continue }
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: folder])
            }
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: folder, NSLocalizedDescriptionKey: "cannot flush \(folder) to disk"])
            }
        }
    }

    // MARK: Placeholders

    /// Where the stub of the file at `path` is.
    func stubPath(_ path: SyncPath) -> String { absolute(path) + PlaceholderStub.suffix }

    /// Writes (or rewrites) the stub standing for the file at `path`, by rename so it is never
    /// seen half written. The file itself must not be here (returns false when it is), unless
    /// `besideFile` (eviction writes the stub before it moves the file away: a crash between the
    /// two leaves both, and the file wins).
    func writeStub(_ stub: PlaceholderStub, at path: SyncPath, besideFile: Bool = false) throws -> Bool {
        if let parent = path.parent { try makeFolder(parent) }
        guard besideFile || access(absolute(path), F_OK) != 0 else { return false }
        // A file with a stub's name that is not one is someone's: it is never replaced.
        guard access(stubPath(path), F_OK) != 0 || PlaceholderStub.read(at: stubPath(path)) != nil else { return false }
        let staged = staging + "/stub-" + UniqueIdentifier.next()
        try stub.encoded().write(to: URL(fileURLWithPath: staged, isDirectory: false))
        guard rename(staged, stubPath(path)) == 0 else {
            unlink(staged)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: stubPath(path)])
        }
        return true
    }

    /// The fingerprint of the stub of `path` (nil when there is none).
    func stubFingerprint(_ path: SyncPath) -> LocalFingerprint? {
        guard let status = try? FileStatus(path: FilePath(stubPath(path))), status.kind == .regular else { return nil }
        return Self.fingerprint(status)
    }

    /// Removes the stub of `path` if it is one (a file with the suffix that is not a stub is
    /// someone's file, and stays).
    func removeStub(_ path: SyncPath) {
        guard PlaceholderStub.read(at: stubPath(path)) != nil else { return }
        unlink(stubPath(path))
    }

    /// Creates the folder `path` (and any missing above it).
    func makeFolder(_ path: SyncPath) throws {
        try FileManager.default.createDirectory(atPath: absolute(path), withIntermediateDirectories: true)
    }

    /// Puts the downloaded (and flushed) file `staged` at `path` when nothing is there: a file created
    /// here in the meantime is never replaced (`renameat2(RENAME_NOREPLACE)`). Returns false when one was.
    func placeNew(_ staged: String, at path: SyncPath) throws -> Bool {
        let target = FilePath(absolute(path))
        do {
            try FilePath(staged).rename(toNewItemAt: target)
            return true
        } catch .fileExists {
            return false
        } catch .noSuchFileOrDirectory {
            // The folder is missing (rarely: a pass makes folders before their files): it is made,
            // and the rename tried again.
        }
        guard let parent = path.parent else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: staged]) }
        try makeFolder(parent)
        do {
            try FilePath(staged).rename(toNewItemAt: target)
            return true
        } catch .fileExists {
            return false
        }
    }

    /// Puts `staged` in place of the file at `path`, if that file still has `expected` as its
    /// fingerprint (a writer that changed it since the scan wins: nothing is replaced). The replaced
    /// bytes are kept as a version of the document first, and the document keeps its identity.
    /// With `alreadyKept`, the bytes are known to be kept as a version already, and no other is added.
    ///
    /// The document keeps its mode; with `executable` (the provider marks the new content so), it
    /// gains the execute bits the umask allows.
    func replace(
        _ path: SyncPath, with staged: String, expected: LocalFingerprint?, versions: VersionStore, kind: VersionRecord.Kind, isConflict: Bool = false,
        alreadyKept: Bool = false, executable: Bool = false
    ) throws -> Bool {
        let target = absolute(path)
        guard fingerprint(path) == expected else { return false }
        if !alreadyKept { try versions.addVersion(ofItemAt: target, kind: kind, isConflict: isConflict) }
        guard fingerprint(path) == expected else { return false }
        let mode = ((try? FileStatus(path: FilePath(target)))?.mode).map { $0 & 0o7777 | (executable ? 0o111 & FileCreationMask.executableMode : 0) }
        try SafeSave.commit(URL(fileURLWithPath: staged), over: URL(fileURLWithPath: target), preservingAttributesOf: target, mode: mode)
        return true
    }

    /// Deletes the file at `path` if it still has `expected` as its fingerprint, keeping its bytes as
    /// a version first. Returns false when the file changed (then it stays).
    func deleteFile(_ path: SyncPath, expected: LocalFingerprint?, versions: VersionStore) throws -> Bool {
        guard let now = fingerprint(path) else { return true }
        guard now == expected else { return false }
        try versions.addVersion(ofItemAt: absolute(path), kind: .external)
        return unlink(absolute(path)) == 0 || errno == ENOENT
    }

    /// Removes the folder at `path` if it is empty. Returns false when it is not.
    func deleteFolder(_ path: SyncPath) -> Bool {
        rmdir(absolute(path)) == 0 || errno == ENOENT
    }
}
