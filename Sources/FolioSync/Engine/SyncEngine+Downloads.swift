#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioSystem
import Foundation
import Logging
import SystemPackage
import UniformTypes

/// The engine's downloads: a remote file brought here (over a local one, kept as a version or a
/// conflict), a placeholder written for it, and the fetch both use.
extension SyncEngine {
    /// Downloads the remote file. Without a local file it lands only if none appeared meanwhile;
    /// over an unchanged local file, the old bytes are kept as a version; over a changed one
    /// (`conflict`), equal contents converge and different ones are both kept: the server's has
    /// the name, the local one becomes a conflict version.
    func download(_ path: SyncPath, _ remote: RemoteEntry, _ run: Run, conflict: Bool) async throws -> Outcome {
        let progress = Progress(totalUnitCount: 0)
        board.began(path, .download, size: remote.size ?? 0, progress: progress)
        defer { board.ended(path) }
        let wasPlaceholder = run.scan.entries[path]?.isPlaceholder == true
        var request = run.request
        // A file with nothing here lands where the provider finishes it (``FetchLanding``): its
        // note and its placement run in that job, with no other hop to a thread and back (5% of a
        // small file's download, measured). An executable one needs its mode set first: it lands after.
        if !conflict, run.scan.entries[path]?.fingerprint == nil || replica.fingerprint(path) == nil,
            run.tree.records[path]?.fileSystemFlags.contains(.userExecutable) != true
        {
            request.landing = FetchLanding { [replica, notes] staged, written, sha256 in
                let placing = UnfinishedTransfer(fingerprint: LocalReplica.fingerprint(written), hash: sha256.hexadecimal, isDownload: true)
                return try Self.placeNew(staged, at: path, placing, wasPlaceholder: wasPlaceholder, replica: replica, notes: notes)
            }
        }
        let (url, item, hash, staged) = try await fetch(FileProviderItemIdentifier(remote.identifier), request: request, progress: progress)
        var placed = false
        defer { if !placed { unlink(url.path) } }
        let executable = item.fileSystemFlags.contains(.userExecutable)
        let newBase = { (fingerprint: LocalFingerprint?) in
            BaseEntry(isFolder: false, identifier: item.itemIdentifier.rawValue, version: item.itemVersion.contentVersion, hash: hash, fingerprint: fingerprint)
        }
        // What is placed is this device's own content until its base is recorded: an edit made
        // to it before then (a crash between the two) is sent over it, not kept as a conflict.
        let placing = UnfinishedTransfer(fingerprint: staged, hash: hash, isDownload: true)
        // The staged file renamed where nothing was: its device, inode, size and date are the
        // placed file's (and a write made to it since is a change the next pass sees).
        func placedNew(_ landed: Bool) -> Outcome {
            noted(path, placing)
            guard landed else { return .deferred("a file appeared here while it downloaded") }
            placed = true
            return .done(newBase(staged), .downloaded)
        }
        if let outcome = request.landing?.outcome {
            let landed = try outcome.get()
            // Listed as not executable, served as executable: the mode follows the file.
            if landed, executable {
                try await SyncFileWork.run { [replica] in _ = chmod(replica.absolute(path), FileCreationMask.executableMode) }
            }
            return placedNew(landed)
        }
        guard let scanned = run.scan.entries[path], let expected = scanned.fingerprint, replica.fingerprint(path) != nil else {
            // The note, the rename and the stub's removal are one job of file work, on its pool.
            let landed = try await SyncFileWork.run { [replica, notes] in
                try Self.placeNew(url.path, at: path, placing, wasPlaceholder: wasPlaceholder, replica: replica, notes: notes)
            }
            return placedNew(landed)
        }
        if conflict {
            guard replica.fingerprint(path) == expected else { return .deferred("the file changed while it downloaded") }
            let localHash = try scanned.hash ?? ContentDigest.sha256(ofFileAt: replica.absolute(path)).hexadecimal
            guard replica.fingerprint(path) == expected else { return .deferred("the file changed while it was compared") }
            if localHash == hash { return .done(newBase(expected), .converged) }
            if let transfer = unfinished[path],
                let settled = try await settle(path, transfer, fetched: (url, item, hash), localHash: localHash, expected: expected, newBase: newBase(nil), run)
            {
                return settled
            }
            // Losers with equal contents are one conflict version; past the cap the item waits
            // for the user (nothing is dropped: the local file stays as it is).
            let unresolved = (try? versions.versions(ofItemAt: replica.absolute(path)).records.filter { $0.isConflict && !$0.isResolved }) ?? []
            let alreadyKept = unresolved.contains { $0.object == localHash }
            if !alreadyKept, Set(unresolved.map(\.object)).count >= Self.maximumConflictVersions {
                return .deferred(
                    "\(Self.maximumConflictVersions) unresolved conflict versions: resolve them (folio versions list) before another is kept; this device's content stays")
            }
            let replaced = try await SyncFileWork.run { [replica, versions, notes] in
                try notes.write(path, placing)
                return try replica.replace(
                    path, with: url.path, expected: expected, versions: versions, kind: .conflict, isConflict: true, alreadyKept: alreadyKept, executable: executable)
            }
            noted(path, placing)
            guard replaced else { return .deferred("the file changed while it downloaded") }
            SyncCrashPoint.reached(.placed)
            logger.notice("conflict: both versions kept", metadata: ["path": "\(path)"])
            return .done(newBase(replica.fingerprint(path)), .conflict(loser: localHash))
        }
        let replaced = try await SyncFileWork.run { [replica, versions, notes] in
            try notes.write(path, placing)
            return try replica.replace(path, with: url.path, expected: expected, versions: versions, kind: .external, executable: executable)
        }
        noted(path, placing)
        guard replaced else { return .deferred("the file changed while it downloaded") }
        SyncCrashPoint.reached(.placed)
        return .done(newBase(replica.fingerprint(path)), .downloaded)
    }

    /// Places the downloaded file `staged` at `path`, where nothing is, after its note in the
    /// journal; whether it was placed (not when a file appeared there meanwhile). A materialized
    /// placeholder's stub goes: the content is here now. File work: on the engine's pool, or where
    /// the provider finishes the file (``FetchLanding``).
    static func placeNew(
        _ staged: String, at path: SyncPath, _ placing: UnfinishedTransfer, wasPlaceholder: Bool, replica: LocalReplica, notes: UnfinishedNoteLog
    ) throws -> Bool {
        try notes.write(path, placing)
        guard try replica.placeNew(staged, at: path) else { return false }
        SyncCrashPoint.reached(.placed)
        if wasPlaceholder { replica.removeStub(path) }
        return true
    }

    /// Decides a path changed on both sides that has an unfinished transfer of this device's (nil:
    /// the usual rule decides, the file here being unchanged since that transfer). A start of
    /// this very file left by a cut upload is sent over. Otherwise the local file, changed since,
    /// is the newest content this device knows, so it keeps the name and is sent. When
    /// the server's content is this device's own — what an upload sent (whole, or the start a cut
    /// request left while the file is unchanged), or what a download placed here and was then
    /// edited in place — nothing else is kept; otherwise the server's content (perhaps another
    /// device's) is kept here as a conflict version first.
    func settle(
        _ path: SyncPath, _ transfer: UnfinishedTransfer, fetched: (url: URL, item: any FileProviderItem, hash: String), localHash: String,
        expected: LocalFingerprint, newBase: BaseEntry, _ run: Run
    ) async throws -> Outcome? {
        let (url, item, hash) = fetched
        let current = RemoteEntry(identifier: item.itemIdentifier.rawValue, isFolder: false, version: item.itemVersion.contentVersion, size: nil)
        let record = FileProviderItemRecord(item)
        if !transfer.isDownload, transfer.fingerprint == expected, try Self.file(url.path, begins: replica.absolute(path)) {
            // The start of this very file, left by a cut upload: sent again over it.
            logger.notice("the server holds part of an unfinished upload: sending it again", metadata: ["path": "\(path)"])
            return try await upload(path, base: newBase, remote: current, run, over: record)
        }
        // Unchanged since this device's transfer, the file here is no newer than the server's
        // content: the usual rule decides.
        guard transfer.hash != localHash else { return nil }
        let own = transfer.hash == hash && (!transfer.isDownload || (transfer.fingerprint.device == expected.device && transfer.fingerprint.inode == expected.inode))
        if own {
            logger.notice("the server holds this device's own earlier content: the newer file here is sent over it", metadata: ["path": "\(path)"])
            if transfer.isDownload {
                // Placed here from the server, as far as device and inode tell (a later file can
                // reuse the inode of a staged one that was never placed): its bytes are kept as a
                // version before the file here is sent over them.
                try versions.addVersion(ofItemAt: replica.absolute(path), contentsOf: url.path, kind: .external)
            }
            return try await upload(path, base: newBase, remote: current, run, over: record)
        }
        let document = replica.absolute(path)
        let unresolved = (try? versions.versions(ofItemAt: document).records.filter { $0.isConflict && !$0.isResolved }) ?? []
        if !unresolved.contains(where: { $0.object == hash }) {
            guard Set(unresolved.map(\.object)).count < Self.maximumConflictVersions else {
                return .deferred(
                    "\(Self.maximumConflictVersions) unresolved conflict versions: resolve them (folio versions list) before another is kept; this device's content stays")
            }
            try versions.addVersion(ofItemAt: document, contentsOf: url.path, kind: .conflict, isConflict: true)
        }
        logger.notice("conflict after an unfinished transfer: the file here is sent, the server's content kept as a version", metadata: ["path": "\(path)"])
        let sent = try await upload(path, base: newBase, remote: current, run, over: record)
        guard case .done(let base, _) = sent else { return sent }
        return .done(base, .uploadedOverConflict(loser: hash))
    }

    /// Whether the file at `part` is no longer than the one at `whole` and holds its first bytes.
    static func file(_ part: String, begins whole: String) throws -> Bool {
        let partHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: part))
        defer { try? partHandle.close() }
        let wholeHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: whole))
        defer { try? wholeHandle.close() }
        while true {
            let chunk = try partHandle.read(upToCount: 256 << 10) ?? Data()
            if chunk.isEmpty { return true }
            guard try wholeHandle.read(upToCount: chunk.count) == chunk else { return false }
        }
    }

    /// Downloads the item's current content into a staged file, flushed (a placed download must
    /// survive a crash: its base says it is synced) and hashed (as it came when the provider can,
    /// meanwhile otherwise). The caller removes the file.
    ///
    /// The file gets the mode any new file of the user's gets, with the execute bits when the
    /// provider marks the item executable (whichever provider wrote it, and however).
    func fetch(_ identifier: FileProviderItemIdentifier, request: FileProviderRequest, progress: Progress) async throws -> (
        url: URL, item: any FileProviderItem, hash: String, staged: LocalFingerprint
    ) {
        // The mode and the flush, then what identifies the file: blocking file work, on its pool.
        func finish(_ file: String, _ item: any FileProviderItem) async throws -> LocalFingerprint {
            let mode = item.fileSystemFlags.contains(.userExecutable) ? FileCreationMask.executableMode : FileCreationMask.fileMode
            return try await SyncFileWork.run {
                guard chmod(file, mode) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file]) }
                try LocalReplica.flush(file)
                return LocalReplica.fingerprint(try FileStatus(path: FilePath(file)))
            }
        }
        if let hashing = provider as? any HashingFileProvider {
            var durable = request
            durable.flushesContents = true
            let fetched = try await hashing.fetchHashedContents(for: identifier, version: nil, request: durable, progress: progress)
            do {
                // Written with the umask's mode and flushed by the provider: only an executable
                // file needs more (not here once the request's landing ran: it took the file).
                let executable = fetched.item.fileSystemFlags.contains(.userExecutable) && request.landing?.outcome == nil
                let staged = executable ? try await finish(fetched.contents.path, fetched.item) : LocalReplica.fingerprint(fetched.written)
                return (fetched.contents, fetched.item, fetched.sha256.hexadecimal, staged)
            } catch {
                unlink(fetched.contents.path)
                throw error
            }
        }
        let (url, item) = try await provider.fetchContents(for: identifier, version: nil, request: request, progress: progress)
        do {
            let file = url.path
            let hashing = Task { try await SyncFileWork.run { try ContentDigest.sha256(ofFileAt: file).hexadecimal } }
            let staged = try await finish(file, item)
            return (url, item, try await hashing.value, staged)
        } catch {
            unlink(url.path)
            throw error
        }
    }

    /// Writes the placeholder of the remote file (the file itself is not here: a placeholder is
    /// only planned where there is none or a stub).
    func placehold(_ path: SyncPath, _ remote: RemoteEntry, _ run: Run) throws -> Outcome {
        let record = run.tree.records[path]
        let stub = PlaceholderStub(
            name: path.name, size: remote.size ?? 0, modified: record?.contentModificationDate?.timeIntervalSince1970,
            contentType: record?.contentType.identifier)
        guard try replica.writeStub(stub, at: path) else { return .deferred("a file appeared here") }
        let known = run.scan.entries[path]?.isPlaceholder == true ? journalHash(path, run, version: remote.version) : nil
        return .done(
            BaseEntry(isFolder: false, identifier: remote.identifier, version: remote.version, hash: known, fingerprint: replica.stubFingerprint(path), isPlaceholder: true),
            .placeheld)
    }

    /// The content hash the scan knew for a placeholder, while the server's version is still the one it was for.
    func journalHash(_ path: SyncPath, _ run: Run, version: Data) -> String? {
        guard let hash = run.scan.entries[path]?.hash, run.base[path]?.version == version else { return nil }
        return hash
    }
}
