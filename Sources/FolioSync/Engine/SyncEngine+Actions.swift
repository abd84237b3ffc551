#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioSystem
import Foundation
import Logging
import SystemPackage
import UniformTypes

extension SyncEngine {
    /// Files at least this large are sent from where they are, not from a snapshot copy.
    static var directUploadSize: Int64 { 64 << 20 }

    /// How many different unresolved conflict versions one document may gather before its sync
    /// waits for the user.
    static var maximumConflictVersions: Int { 10 }

    /// What a pass knows while it runs.
    struct Run: Sendable {
        var tree: RemoteTree
        let scan: LocalReplica.Scan
        let base: [SyncPath: BaseEntry]
        let request: FileProviderRequest
        /// Folders this pass created on the server.
        var createdFolders: [SyncPath: FileProviderItemIdentifier] = [:]
        /// The conflict versions this pass kept (path, SHA-256), to share with the other devices.
        var keptConflicts: [(SyncPath, String)] = []
        /// The paths whose action the server refused (not a transient failure): set aside once
        /// refused pass after pass.
        var refused: Set<SyncPath> = []

        /// The server identifier of the folder at `path` (the root for nil).
        func folderIdentifier(_ path: SyncPath?) -> FileProviderItemIdentifier? {
            if let path, let created = createdFolders[path] { return created }
            return tree.folderIdentifier(path)
        }
    }

    /// How an action ended.
    enum Outcome: Sendable {
        /// Done: the path's new base (nil: dropped), and what happened.
        case done(BaseEntry?, Effect)
        /// Nothing changed; tried again next pass. `refused` when the server refused the action
        /// itself (not busy, unreachable or out of space), so that trying it again unchanged will
        /// likely fail again.
        case deferred(String, refused: Bool = false)
    }

    enum Effect: Sendable {
        case uploaded, downloaded, placeheld, deletedOnServer, deletedHere, converged, recorded
        /// Both kept; `loser` is the SHA-256 of the local content kept as a conflict version.
        case conflict(loser: String)
        /// Both kept the other way round: the local file, newer than an unfinished transfer of its
        /// own, was sent over the server's content, kept here as a conflict version (`loser`).
        case uploadedOverConflict(loser: String)
        case createdRemoteFolder(FileProviderItemIdentifier)
        /// Moved: the bases of the moved item and of everything below it, old paths dropped (nil) and
        /// new ones set; for a folder moved on the server, its new identifier.
        case moved([(SyncPath, BaseEntry?)], folder: FileProviderItemIdentifier?, onServer: Bool)
    }

    func apply(
        _ outcome: Outcome, _ action: SyncAction, _ report: inout SyncReport, _ changes: inout [(SyncPath, BaseEntry?)], _ serverChanged: inout Bool,
        _ run: inout Run
    ) {
        switch outcome {
        case .deferred(let reason, let refused):
            report.deferred[action.path.text] = reason
            if refused { run.refused.insert(action.path) }
            logger.info("deferred", metadata: ["path": "\(action.path)", "reason": "\(reason)"])
        case .done(let base, let effect):
            unfinished[action.path] = nil
            changes.append((action.path, base))
            switch effect {
            case .uploaded:
                report.uploaded += 1
                serverChanged = true
            case .downloaded: report.downloaded += 1
            case .placeheld: report.placeholders += 1
            case .deletedOnServer:
                report.deletedOnServer += 1
                serverChanged = true
            case .deletedHere: report.deletedHere += 1
            case .converged: report.converged += 1
            case .conflict(let loser):
                report.conflicts.append(action.path.text)
                run.keptConflicts.append((action.path, loser))
            case .uploadedOverConflict(let loser):
                report.uploaded += 1
                serverChanged = true
                report.conflicts.append(action.path.text)
                run.keptConflicts.append((action.path, loser))
            case .recorded: break
            case .createdRemoteFolder(let identifier):
                run.createdFolders[action.path] = identifier
                serverChanged = true
            case .moved(let rekeyed, let folder, let onServer):
                changes.append(contentsOf: rekeyed)
                report.moved += 1
                if let folder { run.createdFolders[action.path] = folder }
                if onServer { serverChanged = true }
            }
        }
        board.actionEnded(bytes: Self.transferSize(action, run.scan))
    }

    /// The bytes `action` moves: a file's size for an upload or a download, nothing otherwise.
    static func transferSize(_ action: SyncAction, _ scan: LocalReplica.Scan) -> Int64 {
        switch action {
        case .upload(let path, _, _): scan.entries[path]?.fingerprint?.size ?? 0
        case .download(_, let remote), .reconcile(_, let remote): remote.size ?? 0
        default: 0
        }
    }

    /// Runs one action; provider errors defer it (the next pass decides again from what is there then).
    func perform(_ action: SyncAction, _ run: Run) async -> Outcome {
        do {
            switch action {
            case .upload(let path, let base, let remote): return try await upload(path, base: base, remote: remote, run)
            case .download(let path, let remote): return try await download(path, remote, run, conflict: false)
            case .reconcile(let path, let remote): return try await download(path, remote, run, conflict: true)
            case .placehold(let path, let remote): return try placehold(path, remote, run)
            case .removeStub(let path):
                replica.removeStub(path)
                return .done(nil, .recorded)
            case .deleteRemote(let path, let base): return try await deleteRemote(path, base, run)
            case .deleteLocal(let path, let base): return try await deleteLocal(path, base, run)
            case .makeLocalFolder(let path, let remote):
                try replica.makeFolder(path)
                return .done(BaseEntry(isFolder: true, identifier: remote.identifier, version: remote.version), .recorded)
            case .makeRemoteFolder(let path): return try await makeRemoteFolder(path, run)
            case .adopt(_, let base): return .done(base, .recorded)
            case .forget: return .done(nil, .recorded)
            case .typeClash: return .deferred("a file on one side is a folder on the other", refused: true)
            case .moveRemote(let from, let to, let base): return try await moveRemote(from, to, base, run)
            case .moveLocal(let from, let to, let remote): return try moveLocal(from, to, remote, run)
            }
        } catch let error as FileProviderError {
            return .deferred("\(error)", refused: error.reaction != .backOff)
        } catch {
            return .deferred("\(error)")
        }
    }

    /// Sends the local file: over `record` (the listed item when nil) when there is a base, as a new
    /// item otherwise.
    private func upload(_ path: SyncPath, base: BaseEntry?, remote: RemoteEntry?, _ run: Run, over record: FileProviderItemRecord? = nil) async throws -> Outcome {
        guard let status = replica.fileStatus(path) else { return .deferred("the file went away") }
        let before = LocalReplica.fingerprint(status)
        // The owner's execute bit goes with the content, where the provider keeps one.
        let flags: FileProviderFileSystemFlags = status.mode & S_IXUSR != 0 ? [.userReadable, .userWritable, .userExecutable] : [.userReadable, .userWritable]
        board.began(path, .upload, size: before.size)
        defer { board.ended(path) }
        let source = replica.absolute(path)
        let contents: URL
        var hashing: Task<String, any Error>?
        var snapshotHash = ""
        if before.size >= Self.directUploadSize {
            // A large file is sent from where it is, hashed at the same time; if it changes while it
            // is sent, the server's copy is not taken for any version, and the next pass sends it
            // again. Its hash joins the unfinished transfer once known.
            contents = URL(fileURLWithPath: source)
            try await noteUnfinished(path, UnfinishedTransfer(fingerprint: before))
            hashing = Task {
                let digest = try await SyncFileWork.run { try ContentDigest.sha256(ofFileAt: source).hexadecimal }
                // Only while this upload is still the path's unfinished transfer (an upload that
                // ended another way, or whose path was settled, is not recorded again).
                if unfinished[path] == UnfinishedTransfer(fingerprint: before), replica.fingerprint(path) == before {
                    try await noteUnfinished(path, UnfinishedTransfer(fingerprint: before, hash: digest))
                }
                return digest
            }
        } else {
            // The snapshot sent: a private copy a writer cannot tear mid-upload (not flushed: a crash
            // loses it, and the file it came from is still there to send).
            let staged = stagingSlots.take()
            let copied: (digest: Data, size: Int64)
            do {
                copied = try await SyncFileWork.run { try ContentDigest.copy(from: source, to: staged, durable: false, replacing: true) }
            } catch {
                stagingSlots.give(staged)
                throw error
            }
            guard replica.fingerprint(path) == before else {
                stagingSlots.give(staged)
                return .deferred("the file changed while it was read")
            }
            snapshotHash = copied.digest.hexadecimal
            contents = URL(fileURLWithPath: staged)
        }
        // The snapshot's slot is reused only after a provider call that succeeded: one that failed
        // or was cancelled may have left a reader of it behind (a provider program's child).
        var sent = false
        defer {
            if hashing == nil { sent ? stagingSlots.give(contents.path) : stagingSlots.discard(contents.path) }
        }
        if hashing == nil {
            do {
                try await noteUnfinished(path, UnfinishedTransfer(fingerprint: before, hash: snapshotHash))
            } catch {
                return .deferred("the journal could not record the upload: \(error)")
            }
        }
        let item: any FileProviderItem
        do {
            if let base, remote != nil, var record = record ?? run.tree.records[path] {
                let baseVersion = FileProviderItemVersion(contentVersion: base.version, metadataVersion: record.itemVersion.metadataVersion)
                record.fileSystemFlags = flags
                let result = try await provider.modifyItem(
                    record, baseVersion: baseVersion, changedFields: [.contents, .fileSystemFlags], contents: contents, options: [], request: run.request)
                guard let updated = result.item else { return .deferred("the provider returned no item") }
                item = updated
            } else {
                guard let parent = run.folderIdentifier(path.parent) else { return .deferred("its folder is not on the server yet") }
                let name = path.name
                let type = name.split(separator: ".").count > 1 ? UTType(filenameExtension: String(name.split(separator: ".").last!)) ?? .data : .data
                let template = FileProviderItemRecord(
                    itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: parent, filename: name, contentType: type, fileSystemFlags: flags)
                let result = try await provider.createItem(
                    basedOn: template, fields: [.contents, .filename, .fileSystemFlags], contents: contents, options: [], request: run.request)
                guard let created = result.item else { return .deferred("the provider returned no item") }
                item = created
            }
        } catch let error as FileProviderError where error.code == .filenameCollision && base == nil {
            // Someone created it first — perhaps this very upload, whose reply was lost and which was
            // sent again: the contents are compared now (equal converge, different are both kept).
            // The transfer stays unfinished: an earlier try of it (a provider retries) may be what is there.
            guard let existing = error.collidingItemIdentifier else { return .deferred("\(error)") }
            let item = try await provider.item(for: existing, request: run.request)
            guard item.contentType != .folder else { return .deferred("a folder took its name on the server") }
            let entry = RemoteEntry(identifier: existing.rawValue, isFolder: false, version: item.itemVersion.contentVersion, size: item.documentSize.map { $0.int64Value })
            return try await download(path, entry, run, conflict: true)
        } catch let error as FileProviderError where [.filenameCollision, .baseVersionMismatch, .noSuchItem].contains(error.code) {
            // The server changed since the listing: the next pass compares the contents.
            return .deferred("\(error)")
        }
        sent = true
        if let hashing {
            let digest = try await hashing.value
            snapshotHash = replica.fingerprint(path) == before ? digest : "sent while it changed"
        }
        SyncCrashPoint.reached(.uploaded)
        return .done(
            BaseEntry(isFolder: false, identifier: item.itemIdentifier.rawValue, version: item.itemVersion.contentVersion, hash: snapshotHash, fingerprint: before),
            .uploaded)
    }

    /// Downloads the remote file. Without a local file it lands only if none appeared meanwhile;
    /// over an unchanged local file, the old bytes are kept as a version; over a changed one
    /// (`conflict`), equal contents converge and different ones are both kept: the server's has
    /// the name, the local one becomes a conflict version.
    private func download(_ path: SyncPath, _ remote: RemoteEntry, _ run: Run, conflict: Bool) async throws -> Outcome {
        let progress = Progress(totalUnitCount: 0)
        board.began(path, .download, size: remote.size ?? 0, progress: progress)
        defer { board.ended(path) }
        let (url, item, hash, staged) = try await fetch(FileProviderItemIdentifier(remote.identifier), request: run.request, progress: progress)
        var placed = false
        defer { if !placed { unlink(url.path) } }
        let executable = item.fileSystemFlags.contains(.userExecutable)
        let newBase = { (fingerprint: LocalFingerprint?) in
            BaseEntry(isFolder: false, identifier: item.itemIdentifier.rawValue, version: item.itemVersion.contentVersion, hash: hash, fingerprint: fingerprint)
        }
        // What is placed is this device's own content until its base is recorded: an edit made
        // to it before then (a crash between the two) is sent over it, not kept as a conflict.
        let placing = UnfinishedTransfer(fingerprint: staged, hash: hash, isDownload: true)
        guard let scanned = run.scan.entries[path], let expected = scanned.fingerprint, replica.fingerprint(path) != nil else {
            try await noteUnfinished(path, placing)
            // The rename and the stub's removal are file work, on its pool.
            let wasPlaceholder = run.scan.entries[path]?.isPlaceholder == true
            let landed = try await SyncFileWork.run { [replica] () throws -> LocalFingerprint?? in
                guard try replica.placeNew(url.path, at: path) else { return .none }
                SyncCrashPoint.reached(.placed)
                // A materialized placeholder: the content is here now, so the stub goes.
                if wasPlaceholder { replica.removeStub(path) }
                return .some(replica.fingerprint(path))
            }
            guard let fingerprint = landed else { return .deferred("a file appeared here while it downloaded") }
            placed = true
            return .done(newBase(fingerprint), .downloaded)
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
            try await noteUnfinished(path, placing)
            let replaced = try await SyncFileWork.run { [replica, versions] in
                try replica.replace(
                    path, with: url.path, expected: expected, versions: versions, kind: .conflict, isConflict: true, alreadyKept: alreadyKept, executable: executable)
            }
            guard replaced else { return .deferred("the file changed while it downloaded") }
            SyncCrashPoint.reached(.placed)
            logger.notice("conflict: both versions kept", metadata: ["path": "\(path)"])
            return .done(newBase(replica.fingerprint(path)), .conflict(loser: localHash))
        }
        try await noteUnfinished(path, placing)
        let replaced = try await SyncFileWork.run { [replica, versions] in
            try replica.replace(path, with: url.path, expected: expected, versions: versions, kind: .external, executable: executable)
        }
        guard replaced else { return .deferred("the file changed while it downloaded") }
        SyncCrashPoint.reached(.placed)
        return .done(newBase(replica.fingerprint(path)), .downloaded)
    }

    /// Decides a path changed on both sides that has an unfinished transfer of this device's (nil:
    /// the usual rule decides, the file here being unchanged since that transfer). A start of
    /// this very file left by a cut upload is sent over. Otherwise the local file, changed since,
    /// is the newest content this device knows, so it keeps the name and is sent. When
    /// the server's content is this device's own — what an upload sent (whole, or the start a cut
    /// request left while the file is unchanged), or what a download placed here and was then
    /// edited in place — nothing else is kept; otherwise the server's content (perhaps another
    /// device's) is kept here as a conflict version first.
    private func settle(
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
            let fetched = try await hashing.fetchHashedContents(for: identifier, version: nil, request: request, progress: progress)
            do {
                let staged = try await finish(fetched.contents.path, fetched.item)
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
    private func placehold(_ path: SyncPath, _ remote: RemoteEntry, _ run: Run) throws -> Outcome {
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
    private func journalHash(_ path: SyncPath, _ run: Run, version: Data) -> String? {
        guard let hash = run.scan.entries[path]?.hash, run.base[path]?.version == version else { return nil }
        return hash
    }

    /// Moves on the server what was moved here (no content is sent). The bases below a moved
    /// folder follow with their old identifiers; the next pass takes the server's new ones.
    private func moveRemote(_ from: SyncPath, _ to: SyncPath, _ base: BaseEntry, _ run: Run) async throws -> Outcome {
        guard var record = run.tree.records[from] else { return .deferred("the server no longer has “\(from)”") }
        guard let parent = run.folderIdentifier(to.parent) else { return .deferred("its new folder is not on the server yet") }
        let version = record.itemVersion
        record.filename = to.name
        record.parentItemIdentifier = parent
        let item: any FileProviderItem
        var resent: [(from: SyncPath, to: SyncPath, item: any FileProviderItem)] = []
        do {
            guard let done = try await modifyRetryingRefusal(record, baseVersion: version, run) else { return .deferred("the provider returned no item") }
            item = done
        } catch let error as FileProviderError where base.isFolder && Self.isRefusal(error) {
            // Refused twice: the folder is moved item by item, so a server that refuses folder
            // moves (or copies of folder markers) never wedges a rename. (One cut short is finished
            // by the next pass's plan: the new folder is there, its files match, the rest move.)
            logger.warning("the server refused a folder move twice: moving its items one by one", metadata: ["from": "\(from)", "to": "\(to)", "error": "\(error)"])
            item = try await moveFolderPiecewise(from, to, into: parent, run, resent: &resent)
        }
        var moved = base
        moved.identifier = item.itemIdentifier.rawValue
        moved.fingerprint = base.isPlaceholder ? replica.stubFingerprint(to) : run.scan.entries[to]?.fingerprint ?? base.fingerprint
        if !base.isFolder { moved.version = item.itemVersion.contentVersion }
        logger.info("moved on the server", metadata: ["from": "\(from)", "to": "\(to)"])
        var changes = rekey(from, to, run.base, top: moved)
        // Files sent again are new items on the server: their bases say so (else the next pass
        // would fetch what it just sent).
        for copy in resent {
            guard var entry = run.base[copy.from] else { continue }
            entry.identifier = copy.item.itemIdentifier.rawValue
            entry.version = copy.item.itemVersion.contentVersion
            changes.append((copy.to, entry))
        }
        return .done(nil, .moved(changes, folder: base.isFolder ? item.itemIdentifier : nil, onServer: true))
    }

    /// Whether `error` is the server refusing an action (as opposed to its being busy, unreachable,
    /// or the item having changed): something a simpler action may get past.
    static func isRefusal(_ error: FileProviderError) -> Bool {
        [.cannotSynchronize, .excludedFromSync].contains(error.code)
    }

    /// `modifyItem` of a rename or move, sent a second time when the server refuses the first.
    private func modifyRetryingRefusal(_ record: FileProviderItemRecord, baseVersion: FileProviderItemVersion, _ run: Run) async throws -> (any FileProviderItem)? {
        do {
            return try await provider.modifyItem(record, baseVersion: baseVersion, changedFields: [.filename, .parentItemIdentifier], contents: nil, options: [], request: run.request).item
        } catch let error as FileProviderError where Self.isRefusal(error) {
            return try await provider.modifyItem(record, baseVersion: baseVersion, changedFields: [.filename, .parentItemIdentifier], contents: nil, options: [], request: run.request).item
        }
    }

    /// Moves the folder at `from` on the server to `to` (in the folder `parent`) without moving the
    /// folder itself: the new folder is created, each item in it moved there (a refused folder the
    /// same way, a refused file sent again from here and the old one deleted), and the old folder,
    /// now empty, deleted. Returns the new folder.
    private func moveFolderPiecewise(
        _ from: SyncPath, _ to: SyncPath, into parent: FileProviderItemIdentifier, _ run: Run,
        resent: inout [(from: SyncPath, to: SyncPath, item: any FileProviderItem)]
    ) async throws -> any FileProviderItem {
        let template = FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier("new-\(UUID().uuidString)"), parentItemIdentifier: parent, filename: to.name, contentType: .folder)
        let created = try await provider.createItem(basedOn: template, fields: [.filename, .parentItemIdentifier], contents: nil, options: [.mayAlreadyExist], request: run.request)
        guard let folder = created.item else { throw FileProviderError(.cannotSynchronize, message: "the provider returned no folder for “\(to)”") }
        for (path, child) in run.tree.records where path.parent == from {
            let destination = SyncPath(to.text + "/" + path.name)
            var moved = child
            moved.parentItemIdentifier = folder.itemIdentifier
            do {
                _ = try await modifyRetryingRefusal(moved, baseVersion: child.itemVersion, run)
            } catch let error as FileProviderError where Self.isRefusal(error) {
                if child.isFolder {
                    _ = try await moveFolderPiecewise(path, destination, into: folder.itemIdentifier, run, resent: &resent)
                    continue
                }
                // Sent again from here, only when nothing differs: the server's file is the one this
                // device last synced (no other device's edit is replaced) and the file here is
                // unchanged since (not a placeholder, not being written). Else the move waits.
                guard let based = run.base[path], based.version == child.itemVersion.contentVersion,
                    let local = run.scan.entries[destination], !local.isPlaceholder, local.fingerprint != nil, local.fingerprint == based.fingerprint
                else { throw error }
                let copy = FileProviderItemRecord(
                    itemIdentifier: FileProviderItemIdentifier("new-\(UUID().uuidString)"), parentItemIdentifier: folder.itemIdentifier, filename: path.name)
                let created = try await provider.createItem(
                    basedOn: copy, fields: [.filename, .parentItemIdentifier, .contents], contents: URL(fileURLWithPath: replica.absolute(destination)), options: [],
                    request: run.request)
                // The copy is taken back when the original must stay: nothing is left twice.
                func takeBackCopy() async {
                    guard let sent = created.item else { return }
                    try? await provider.deleteItem(identifier: sent.itemIdentifier, baseVersion: sent.itemVersion, options: [], request: run.request)
                }
                guard replica.fingerprint(destination) == based.fingerprint else {
                    // Written while it was sent: it goes again later, the original stays.
                    await takeBackCopy()
                    throw FileProviderError(.cannotSynchronize, message: "“\(destination)” changed while it was sent")
                }
                do {
                    try await provider.deleteItem(identifier: child.itemIdentifier, baseVersion: FileProviderItemVersion(contentVersion: based.version, metadataVersion: child.itemVersion.metadataVersion), options: [], request: run.request)
                    if let sent = created.item { resent.append((path, destination, sent)) }
                } catch {
                    await takeBackCopy()
                    throw error
                }
            }
        }
        try await provider.deleteItem(identifier: run.tree.records[from]?.itemIdentifier ?? FileProviderItemIdentifier(from.text), baseVersion: FileProviderItemVersion(), options: [], request: run.request)
        return folder
    }

    /// Moves here what the server moved (a rename that never replaces: a file that appeared at the
    /// new path meanwhile wins, and the move waits).
    private func moveLocal(_ from: SyncPath, _ to: SyncPath, _ remote: RemoteEntry, _ run: Run) throws -> Outcome {
        guard let base = run.base[from] else { return .deferred("“\(from)” is not synced") }
        if !base.isFolder {
            guard replica.fingerprint(from) == run.scan.entries[from]?.fingerprint else { return .deferred("“\(from)” changed") }
        }
        if let parent = to.parent { try replica.makeFolder(parent) }
        do {
            try FilePath(replica.absolute(from)).rename(toNewItemAt: FilePath(replica.absolute(to)))
        } catch {
            return .deferred("“\(from)” could not be moved to “\(to)”: \(error)")
        }
        var moved = base
        moved.identifier = remote.identifier
        if !base.isFolder {
            moved.version = remote.version
            moved.fingerprint = replica.fingerprint(to)
        }
        logger.info("moved here", metadata: ["from": "\(from)", "to": "\(to)"])
        return .done(nil, .moved(rekey(from, to, run.base, top: moved), folder: nil, onServer: false))
    }

    /// The base changes of a move: every base at or below `from` dropped, and set again at the same
    /// place below `to` (`top` for the moved item itself).
    private func rekey(_ from: SyncPath, _ to: SyncPath, _ base: [SyncPath: BaseEntry], top: BaseEntry) -> [(SyncPath, BaseEntry?)] {
        var changes: [(SyncPath, BaseEntry?)] = []
        for (path, entry) in base where path.isWithin(from) {
            changes.append((path, nil))
            guard path != from else { continue }
            changes.append((SyncPath(to.text + String(decoding: path.bytes.dropFirst(from.bytes.count), as: UTF8.self)), entry))
        }
        changes.append((to, top))
        return changes
    }

    private func deleteRemote(_ path: SyncPath, _ base: BaseEntry, _ run: Run) async throws -> Outcome {
        let version = FileProviderItemVersion(contentVersion: base.version, metadataVersion: run.tree.records[path]?.itemVersion.metadataVersion ?? Data())
        do {
            // The listed identifier: a base carried along by a folder move still has its old one.
            let identifier = run.tree.entries[path]?.identifier ?? base.identifier
            try await provider.deleteItem(identifier: FileProviderItemIdentifier(identifier), baseVersion: version, options: [], request: run.request)
        } catch let error as FileProviderError where error.code == .noSuchItem {
            return .done(nil, .recorded)
        }
        return .done(nil, .deletedOnServer)
    }

    /// Deletes here what the server no longer has, once the provider confirms the absence, and
    /// only while the local item is unchanged (a file's bytes are kept as a version).
    private func deleteLocal(_ path: SyncPath, _ base: BaseEntry, _ run: Run) async throws -> Outcome {
        do {
            _ = try await provider.item(for: FileProviderItemIdentifier(base.identifier), request: run.request)
            return .deferred("the server still has it, though its listing did not")
        } catch let error as FileProviderError where error.code == .noSuchItem {}
        if base.isFolder {
            return replica.deleteFolder(path) ? .done(nil, .deletedHere) : .deferred("the folder is not empty")
        }
        if run.scan.entries[path]?.isPlaceholder == true {
            replica.removeStub(path)
            return .done(nil, .deletedHere)
        }
        guard try replica.deleteFile(path, expected: run.scan.entries[path]?.fingerprint, versions: versions) else {
            return .deferred("the file changed")
        }
        return .done(nil, .deletedHere)
    }

    private func makeRemoteFolder(_ path: SyncPath, _ run: Run) async throws -> Outcome {
        guard let parent = run.folderIdentifier(path.parent) else { return .deferred("its folder is not on the server yet") }
        let template = FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: parent, filename: path.name, contentType: .folder)
        let result = try await provider.createItem(basedOn: template, fields: [.filename], contents: nil, options: .mayAlreadyExist, request: run.request)
        guard let item = result.item else { return .deferred("the provider returned no item") }
        return .done(BaseEntry(isFolder: true, identifier: item.itemIdentifier.rawValue, version: item.itemVersion.contentVersion), .createdRemoteFolder(item.itemIdentifier))
    }
}
