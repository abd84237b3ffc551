#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioSystem
import Foundation
import Logging
import SystemPackage
import UniformTypes

/// The engine's moves: what was moved here moved on the server (a refused folder move done piece by
/// piece), what the server moved moved here, and the bases that follow them.
extension SyncEngine {
    /// Moves on the server what was moved here (no content is sent). The bases below a moved
    /// folder follow with their old identifiers; the next pass takes the server's new ones.
    func moveRemote(_ from: SyncPath, _ to: SyncPath, _ base: BaseEntry, _ run: Run) async throws -> Outcome {
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
    func modifyRetryingRefusal(_ record: FileProviderItemRecord, baseVersion: FileProviderItemVersion, _ run: Run) async throws -> (any FileProviderItem)? {
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
    func moveFolderPiecewise(
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
    func moveLocal(_ from: SyncPath, _ to: SyncPath, _ remote: RemoteEntry, _ run: Run) throws -> Outcome {
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
    func rekey(_ from: SyncPath, _ to: SyncPath, _ base: [SyncPath: BaseEntry], top: BaseEntry) -> [(SyncPath, BaseEntry?)] {
        var changes: [(SyncPath, BaseEntry?)] = []
        for (path, entry) in base where path.isWithin(from) {
            changes.append((path, nil))
            guard path != from else { continue }
            changes.append((SyncPath(to.text + String(decoding: path.bytes.dropFirst(from.bytes.count), as: UTF8.self)), entry))
        }
        changes.append((to, top))
        return changes
    }
}
