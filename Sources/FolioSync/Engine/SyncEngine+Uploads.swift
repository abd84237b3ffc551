#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioSystem
import Foundation
import Logging
import SystemPackage
import UniformTypes

/// The engine's uploads: a snapshot of the local file (or the file itself, when large) sent as a
/// new item or over the server's, journaled before its effect.
extension SyncEngine {
    /// Sends the local file: over `record` (the listed item when nil) when there is a base, as a new
    /// item otherwise. With `versionMayFollow`, a provider that lists folders in one request may
    /// leave the new version to be listed after the pass's transfers (``settleVersions(_:listedCounts:request:)``).
    func upload(
        _ path: SyncPath, base: BaseEntry?, remote: RemoteEntry?, _ run: Run, over record: FileProviderItemRecord? = nil, versionMayFollow: Bool = false
    ) async throws -> Outcome {
        var request = run.request
        request.versionMayFollow = versionMayFollow && provider is any FolderListingFileProvider
        let source = replica.absolute(path)
        // A small file goes from memory to a provider that takes bytes.
        let uploading = provider as? any UploadingFileProvider, inMemory = uploading != nil
        // What the file is, and the snapshot sent when it is small (its bytes, or a private copy a
        // writer cannot tear mid-upload; not flushed: a crash loses it, and the file it came from is
        // still there to send), then the snapshot's note (the pass's note log): file work, one job
        // on its pool.
        let slot = stagingSlots.take()
        let read: (status: FileStatus, snapshot: Data?, bytes: [UInt8]?, unchanged: Bool, noted: Result<Void, any Error>?)?
        do {
            read = try await SyncFileWork.run { [replica, notes] in
                guard let status = replica.fileStatus(path) else { return nil }
                guard status.size < Self.directUploadSize else { return (status, nil, nil, true, nil) }
                let snapshot: (digest: Data, bytes: [UInt8]?)
                if inMemory, status.size <= Self.inMemoryUploadSize {
                    // Grown past the limit since: changed while it was read.
                    guard let read = try ContentDigest.read(source, expecting: Int(status.size), upTo: Self.inMemoryUploadSize) else {
                        return (status, nil, nil, false, nil)
                    }
                    snapshot = (read.digest, read.bytes)
                } else {
                    snapshot = (try ContentDigest.copy(from: source, to: slot, durable: false, replacing: true).digest, nil)
                }
                let fingerprint = LocalReplica.fingerprint(status)
                guard replica.fingerprint(path) == fingerprint else { return (status, snapshot.digest, nil, false, nil) }
                let noted = Result { try notes.write(path, UnfinishedTransfer(fingerprint: fingerprint, hash: snapshot.digest.hexadecimal)) }
                return (status, snapshot.digest, snapshot.bytes, true, noted)
            }
        } catch {
            stagingSlots.give(slot)
            throw error
        }
        guard let read, read.unchanged else {
            stagingSlots.give(slot)
            return .deferred(read == nil ? "the file went away" : "the file changed while it was read")
        }
        let before = LocalReplica.fingerprint(read.status)
        // The owner's execute bit goes with the content, where the provider keeps one.
        let flags: FileProviderFileSystemFlags = read.status.mode & S_IXUSR != 0 ? [.userReadable, .userWritable, .userExecutable] : [.userReadable, .userWritable]
        board.began(path, .upload, size: before.size)
        defer { board.ended(path) }
        let contents: UploadContents
        var hashing: Task<String, any Error>?
        var snapshotHash = ""
        if let snapshot = read.snapshot {
            snapshotHash = snapshot.hexadecimal
            if let bytes = read.bytes {
                stagingSlots.give(slot)
                contents = .bytes(bytes)
            } else {
                contents = .file(URL(fileURLWithPath: slot, isDirectory: false))
            }
        } else {
            stagingSlots.give(slot)
            // A large file is sent from where it is, hashed at the same time; if it changes while it
            // is sent, the server's copy is not taken for any version, and the next pass sends it
            // again. Its hash joins the unfinished transfer once known.
            contents = .file(URL(fileURLWithPath: source, isDirectory: false))
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
        }
        // The snapshot's slot is reused only after a provider call that succeeded: one that failed
        // or was cancelled may have left a reader of it behind (a provider program's child).
        var sent = false
        defer {
            if hashing == nil, case .file(let copy) = contents { sent ? stagingSlots.give(copy.path) : stagingSlots.discard(copy.path) }
        }
        if hashing == nil {
            do {
                try read.noted?.get()
            } catch {
                return .deferred("the journal could not record the upload: \(error)")
            }
            noted(path, UnfinishedTransfer(fingerprint: before, hash: snapshotHash))
        }
        let item: any FileProviderItem
        let calling = ContinuousClock.now
        do {
            if let base, remote != nil, var record = record ?? run.tree.records[path] {
                let baseVersion = FileProviderItemVersion(contentVersion: base.version, metadataVersion: record.itemVersion.metadataVersion)
                // The flags are a change only where the server lists another execute bit.
                let changed: FileProviderItemFields =
                    record.fileSystemFlags.contains(.userExecutable) == flags.contains(.userExecutable) ? [.contents] : [.contents, .fileSystemFlags]
                record.fileSystemFlags = flags
                let result =
                    if let uploading {
                        try await uploading.modifyItem(record, baseVersion: baseVersion, changedFields: changed, uploading: contents, options: [], request: request)
                    } else {
                        try await provider.modifyItem(record, baseVersion: baseVersion, changedFields: changed, contents: contents.file, options: [], request: request)
                    }
                guard let updated = result.item else { return .deferred("the provider returned no item") }
                item = updated
            } else {
                guard let parent = run.folderIdentifier(path.parent) else { return .deferred("its folder is not on the server yet") }
                let name = path.name
                let template = FileProviderItemRecord(
                    itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: parent, filename: name, contentType: .ofFile(named: name), fileSystemFlags: flags)
                let fields: FileProviderItemFields = [.contents, .filename, .fileSystemFlags]
                let result =
                    if let uploading {
                        try await uploading.createItem(basedOn: template, fields: fields, uploading: contents, options: [], request: request)
                    } else {
                        try await provider.createItem(basedOn: template, fields: fields, contents: contents.file, options: [], request: request)
                    }
                guard let created = result.item else { return .deferred("the provider returned no item") }
                item = created
            }
        } catch let error as FileProviderError where error.code == .filenameCollision && base == nil {
            // Someone created it first — perhaps this very upload, whose reply was lost and which was
            // sent again: the contents are compared now (equal converge, different are both kept).
            // The transfer stays unfinished: an earlier try of it (a provider retries) may be what is there.
            guard let existing = error.collidingItemIdentifier else { return .deferred("\(error)") }
            let item = try await provider.item(for: existing, request: run.request)
            guard !item.contentType.isFolder else { return .deferred("a folder took its name on the server") }
            let entry = RemoteEntry(identifier: existing.rawValue, isFolder: false, version: item.itemVersion.contentVersion, size: item.documentSize.map { $0.int64Value })
            return try await download(path, entry, run, conflict: true)
        } catch let error as FileProviderError where [.filenameCollision, .localVersionConflictingWithServer, .noSuchItem].contains(error.code) {
            // The server changed since the listing: the next pass compares the contents.
            return .deferred("\(error)")
        }
        sent = true
        if let hashing {
            let digest = try await hashing.value
            snapshotHash = replica.fingerprint(path) == before ? digest : "sent while it changed"
        }
        SyncCrashPoint.reached(.uploaded)
        let sentBase = BaseEntry(
            isFolder: false, identifier: item.itemIdentifier.rawValue, version: item.itemVersion.contentVersion, hash: snapshotHash, fingerprint: before)
        guard request.versionMayFollow, item.itemVersion.contentVersion.isEmpty else { return .done(sentBase, .uploaded()) }
        let unsettled = UnsettledUpload(
            base: sentBase, folder: item.parentItemIdentifier, identifier: item.itemIdentifier, size: item.documentSize?.int64Value,
            written: item.contentModificationDate, elapsed: (ContinuousClock.now - calling).seconds)
        return .done(sentBase, .uploaded(unsettled: unsettled))
    }
}
