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

    /// Files at most this large are sent from memory to a provider that takes bytes
    /// (``UploadingFileProvider``): read once, with no snapshot copy on disk.
    static var inMemoryUploadSize: Int { 1 << 20 }

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
        /// Uploads whose new version the server's reply did not name, by path.
        var unsettled: [SyncPath: UnsettledUpload] = [:]
        /// How many items the listing has in each folder (counted when first needed).
        var listedCounts: [FileProviderItemIdentifier: Int]?
        /// The folders in which this pass placed, replaced or renamed items here, not yet flushed:
        /// their entries reach the disk before the bases that record them (``SyncEngine/record(_:_:)``).
        var placedIn: Set<SyncPath> = []

        /// How many items the listing has in each folder.
        mutating func itemsByFolder() -> [FileProviderItemIdentifier: Int] {
            if let listedCounts { return listedCounts }
            let counts = Dictionary(grouping: tree.records.values, by: \.parentItemIdentifier).mapValues(\.count)
            listedCounts = counts
            return counts
        }

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
        /// Sent; `unsettled` when the server's reply did not name the new version, which
        /// ``SyncEngine/settleVersions(_:listedCounts:request:)`` lists after the pass's transfers.
        case uploaded(unsettled: UnsettledUpload? = nil)
        case downloaded, placeheld, deletedOnServer, deletedHere, converged, recorded
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
            if case .uploaded(let unsettled?) = effect {
                // Unfinished until settled (``settleVersions(_:listedCounts:request:)``).
                run.unsettled[action.path] = unsettled
            } else {
                unfinished[action.path] = nil
                changes.append((action.path, base))
            }
            switch effect {
            case .uploaded:
                report.uploaded += 1
                serverChanged = true
            case .downloaded:
                report.downloaded += 1
                run.placedIn.insert(action.path.parent ?? .root)
            case .placeheld:
                report.placeholders += 1
                run.placedIn.insert(action.path.parent ?? .root)
            case .deletedOnServer:
                report.deletedOnServer += 1
                serverChanged = true
            case .deletedHere: report.deletedHere += 1
            case .converged: report.converged += 1
            case .conflict(let loser):
                report.conflicts.append(action.path.text)
                run.keptConflicts.append((action.path, loser))
                run.placedIn.insert(action.path.parent ?? .root)
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
                if onServer {
                    serverChanged = true
                } else {
                    // Renamed here: the folders it left and entered (the shallowest paths).
                    for moved in [rekeyed.filter { $0.1 == nil }, rekeyed.filter { $0.1 != nil }] {
                        if let top = moved.min(by: { $0.0.depth < $1.0.depth }) { run.placedIn.insert(top.0.parent ?? .root) }
                    }
                }
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

    /// Runs `actions`, up to ``concurrency`` at once, each against `run` as it is now; `ended` takes
    /// each outcome as it comes, one at a time, in the pass's own task.
    func performConcurrently(_ actions: [SyncAction], _ run: Run, ended: (SyncAction, Outcome) async -> Void) async {
        await withTaskGroup(of: (SyncAction, Outcome).self) { group in
            var pending = actions[...]
            for _ in 0..<concurrency {
                guard let action = pending.popFirst() else { break }
                group.addTask { (action, await self.perform(action, run)) }
            }
            while let (action, outcome) = await group.next() {
                await ended(action, outcome)
                if let action = pending.popFirst() { group.addTask { (action, await self.perform(action, run)) } }
            }
        }
    }

    /// Runs one action; provider errors defer it (the next pass decides again from what is there then).
    func perform(_ action: SyncAction, _ run: Run) async -> Outcome {
        do {
            switch action {
            case .upload(let path, let base, let remote): return try await upload(path, base: base, remote: remote, run, versionMayFollow: true)
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
