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
    /// Uploads the conflict versions this pass kept to the shared conflict area (``SharedConflict``).
    /// A failure is logged and changes nothing: the version stays kept here.
    func shareConflicts(_ kept: [(SyncPath, String)], _ run: inout Run) async -> Bool {
        var shared = false
        for (path, object) in kept {
            let manifest = SharedConflict(
                path: path.text, object: object, size: (try? FileStatus(path: FilePath(versions.objectPath(object))))?.size ?? 0, device: ProcessInfo.processInfo.hostName,
                date: Date().timeIntervalSince1970)
            guard run.tree.conflicts[manifest.manifestName] == nil else { continue }
            do {
                let folder = try await conflictFolder(&run)
                if run.tree.conflicts[object] == nil {
                    let created = try await create(object, in: folder, contents: URL(fileURLWithPath: versions.objectPath(object)), run)
                    run.tree.conflicts[object] = created
                }
                let staged = replica.staging + "/conflict-\(UUID().uuidString)"
                try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: staged))
                defer { unlink(staged) }
                run.tree.conflicts[manifest.manifestName] = try await create(manifest.manifestName, in: folder, contents: URL(fileURLWithPath: staged), run)
                try await journal.markConflictSeen(manifest.manifestName, path: path)
                shared = true
            } catch {
                logger.warning("a conflict version could not be shared; it stays kept here", metadata: ["path": "\(path)", "error": "\(error)"])
            }
        }
        return shared
    }

    /// Adds the conflict versions other devices shared to the documents they belong to, where the
    /// documents are downloaded here; returns how many were added.
    func importConflicts(_ run: Run) async -> Int {
        let seen = (try? await journal.conflictsSeen()) ?? [:]
        let unseen = run.tree.conflicts.filter { SharedConflict.isManifestName($0.key) && seen[$0.key] == nil }
        guard !unseen.isEmpty else { return 0 }
        // A manifest's name ends with its document's path key: one whose document is not downloaded
        // here now (a placeholder, or absent) waits without being fetched again every pass.
        var documents: [String: SyncPath] = [:]
        for (path, entry) in run.tree.entries where !entry.isFolder { documents[SharedConflict.pathKey(path.text)] = path }
        for (path, entry) in run.scan.entries where !entry.isFolder { documents[SharedConflict.pathKey(path.text)] = path }
        var imported = 0
        for (name, record) in unseen {
            guard let document = documents[SharedConflict.pathKey(ofManifest: name)], replica.fingerprint(document) != nil else { continue }
            do {
                let (manifestURL, _, _, _) = try await fetch(record.itemIdentifier, request: run.request, progress: Progress(totalUnitCount: 0))
                defer { unlink(manifestURL.path) }
                let data = try Data(contentsOf: manifestURL)
                guard let manifest = SharedConflict.parse(data, name: name) else {
                    logger.warning("a shared conflict manifest was refused", metadata: ["name": "\(name)"])
                    try await journal.markConflictSeen(name, path: nil)
                    continue
                }
                let path = SyncPath(manifest.path)
                // Only onto a downloaded document (a placeholder gets it once downloaded).
                guard replica.fingerprint(path) != nil else { continue }
                let document = replica.absolute(path)
                let unresolved = try versions.versions(ofItemAt: document).records.filter { $0.isConflict && !$0.isResolved }
                if !unresolved.contains(where: { $0.object == manifest.object }) {
                    guard Set(unresolved.map(\.object)).count < Self.maximumConflictVersions, let object = run.tree.conflicts[manifest.object] else { continue }
                    let (url, _, hash, _) = try await fetch(object.itemIdentifier, request: run.request, progress: Progress(totalUnitCount: 0))
                    defer { unlink(url.path) }
                    guard hash == manifest.object else {
                        logger.warning("a shared conflict version does not match its name; refused", metadata: ["path": "\(path)"])
                        try await journal.markConflictSeen(name, path: nil)
                        continue
                    }
                    try versions.addVersion(ofItemAt: document, contentsOf: url.path, kind: .conflict, isConflict: true)
                    logger.notice("conflict version from another device kept", metadata: ["path": "\(path)", "device": "\(manifest.device)"])
                    imported += 1
                }
                try await journal.markConflictSeen(name, path: path)
            } catch {
                logger.info("a shared conflict version waits for the next pass", metadata: ["name": "\(name)", "error": "\(error)"])
            }
        }
        return imported
    }

    /// Carries resolutions both ways: a shared conflict this device had and its user resolved
    /// (no unresolved version of those bytes left) is removed from the server; one another device
    /// removed is marked resolved here (its bytes stay, as a resolved version). Not in a merge (the
    /// server's area may be a restored or replaced one). Returns how many were resolved here.
    func settleSharedConflicts(_ run: Run, merging: Bool) async -> Int {
        guard !merging, let seen = try? await journal.conflictsSeen() else { return 0 }
        var resolvedHere = 0
        for (name, known) in seen {
            guard let path = known else { continue }
            let object = String(name.prefix(64))
            let document = replica.absolute(path)
            guard replica.fingerprint(path) != nil, let records = try? versions.versions(ofItemAt: document) else { continue }
            let unresolved = records.records.filter { $0.isConflict && !$0.isResolved && $0.object == object }
            do {
                if let manifest = run.tree.conflicts[name] {
                    guard unresolved.isEmpty else { continue }
                    try await provider.deleteItem(identifier: manifest.itemIdentifier, baseVersion: manifest.itemVersion, options: [], request: run.request)
                    // The bytes go when no other document's manifest names them.
                    if let bytes = run.tree.conflicts[object], !run.tree.conflicts.keys.contains(where: { $0 != name && $0.hasPrefix(object + "-") }) {
                        try await provider.deleteItem(identifier: bytes.itemIdentifier, baseVersion: bytes.itemVersion, options: [], request: run.request)
                    }
                    logger.info("a resolved conflict was removed from the shared area", metadata: ["path": "\(path)"])
                } else {
                    for record in unresolved { try versions.markResolved(record.id, identity: records.identity, path: document) }
                    if !unresolved.isEmpty {
                        logger.notice("a conflict resolved on another device is resolved here", metadata: ["path": "\(path)"])
                        resolvedHere += 1
                    }
                }
                try await journal.forgetConflictSeen(name)
            } catch {
                logger.info("a shared conflict's resolution waits for the next pass", metadata: ["path": "\(path)", "error": "\(error)"])
            }
        }
        return resolvedHere
    }

    /// The conflict area's folder, made (with the meta folder) when missing.
    private func conflictFolder(_ run: inout Run) async throws -> FileProviderItemIdentifier {
        if let folder = run.tree.conflictFolder { return folder.itemIdentifier }
        if run.tree.meta == nil {
            run.tree.meta = try await createFolder(RemoteTree.metaFolder, in: .rootContainer, run)
        }
        let folder = try await createFolder("conflicts", in: run.tree.meta!.itemIdentifier, run)
        run.tree.conflictFolder = folder
        return folder.itemIdentifier
    }

    private func createFolder(_ name: String, in parent: FileProviderItemIdentifier, _ run: Run) async throws -> FileProviderItemRecord {
        let template = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: parent, filename: name, contentType: .folder)
        let result = try await provider.createItem(basedOn: template, fields: [.filename], contents: nil, options: .mayAlreadyExist, request: run.request)
        return result.item.map(FileProviderItemRecord.init) ?? template
    }

    /// Creates the file `name` in `parent`; one already there (equal losers share a name) is it.
    private func create(_ name: String, in parent: FileProviderItemIdentifier, contents: URL, _ run: Run) async throws -> FileProviderItemRecord {
        let template = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: parent, filename: name, contentType: .data)
        do {
            let result = try await provider.createItem(basedOn: template, fields: [.contents, .filename], contents: contents, options: [], request: run.request)
            return result.item.map(FileProviderItemRecord.init) ?? template
        } catch let error as FileProviderError where error.code == .filenameCollision {
            guard let existing = error.collidingItemIdentifier else { throw error }
            return FileProviderItemRecord(try await provider.item(for: existing, request: run.request))
        }
    }
}
