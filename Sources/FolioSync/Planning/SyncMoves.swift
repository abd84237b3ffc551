import Foundation

/// Finds the renames and moves in a planned pass, so that a moved file or folder is moved on the
/// other side, not deleted there and sent again (and a renamed folder never looks like a mass
/// deletion). A pure function of the plan and the three views, like ``SyncPlanner``.
///
/// - Here → server: a path the base knows is gone here, and a new path here has the same file (its
///   device, inode, size and date equal the base's fingerprint; for a placeholder, its stub's).
/// - Server → here: a path the base knows is gone from the server, unchanged here, and a new
///   remote path has the same content version, which no other candidate shares, or which others
///   share but not with the same name, or which is the one left on each side once the others
///   paired by name (a WebDAV move keeps the ETag; an S3 copy keeps a single-part MD5).
/// - A folder is moved as one when it is gone from one place, a new folder appeared, and every
///   file moved out of the old one landed at the same place in the new one. What was deleted in
///   it moves along and is deleted by the next pass; what is new in it is sent after the move.
enum SyncMoves {
    static func pair(
        _ actions: [SyncAction], local: [SyncPath: LocalEntry], remote: [SyncPath: RemoteEntry], base: [SyncPath: BaseEntry]
    ) -> [SyncAction] {
        var result = pairLocalMoves(actions, local: local, base: base)
        result = pairRemoteMoves(result, local: local, remote: remote, base: base)
        return result
    }

    // MARK: Here → server

    private static func pairLocalMoves(_ actions: [SyncAction], local: [SyncPath: LocalEntry], base: [SyncPath: BaseEntry]) -> [SyncAction] {
        // Files gone here, by the fingerprint they had.
        var gone: [LocalFingerprint: (SyncPath, BaseEntry)] = [:]
        var ambiguous: Set<LocalFingerprint> = []
        for case .deleteRemote(let path, let entry) in actions where !entry.isFolder {
            guard let fingerprint = entry.fingerprint else { continue }
            if gone[fingerprint] != nil { ambiguous.insert(fingerprint) }
            gone[fingerprint] = (path, entry)
        }
        var moves: [SyncPath: (from: SyncPath, base: BaseEntry)] = [:]
        var used: Set<SyncPath> = []
        for action in actions {
            let path: SyncPath
            switch action {
            case .upload(let new, nil, nil), .removeStub(let new): path = new
            default: continue
            }
            guard let fingerprint = local[path]?.fingerprint, !ambiguous.contains(fingerprint), let (from, entry) = gone[fingerprint],
                !used.contains(from)
            else { continue }
            used.insert(from)
            moves[path] = (from, entry)
        }
        guard !moves.isEmpty else { return actions }
        // Folders moved as one.
        let newFolders = actions.compactMap { action -> SyncPath? in
            if case .makeRemoteFolder(let path) = action { return path }
            return nil
        }
        let goneFolders = actions.compactMap { action -> (SyncPath, BaseEntry)? in
            if case .deleteRemote(let path, let entry) = action, entry.isFolder { return (path, entry) }
            return nil
        }
        let folderMoves = wholeFolders(gone: goneFolders.map(\.0), arrived: Set(newFolders), files: moves.mapValues(\.from)).map { move in
            (from: move.from, to: move.to, base: goneFolders.first { $0.0 == move.from }!.1)
        }
        var result: [SyncAction] = []
        for action in actions {
            switch action {
            case .deleteRemote(let path, _) where folderMoves.contains { path.isWithin($0.from) } || used.contains(path): continue
            case .makeRemoteFolder(let path) where folderMoves.contains { path.isWithin($0.to) && path != $0.to }: result.append(action)
            case .makeRemoteFolder(let path) where folderMoves.contains { path == $0.to }: continue
            case .upload(let path, nil, nil), .removeStub(let path):
                guard let move = moves[path] else {
                    result.append(action)
                    continue
                }
                // Moved along with its folder, or on its own.
                if !folderMoves.contains(where: { move.from.isWithin($0.from) }) { result.append(.moveRemote(from: move.from, to: path, move.base)) }
            default: result.append(action)
            }
        }
        for move in folderMoves { result.append(.moveRemote(from: move.from, to: move.to, move.base)) }
        return result
    }

    /// The folders that moved as one: a folder gone from one place (`gone`) and a new one
    /// (`arrived`) such that every file that left the old one (`files`: new path → old path) landed
    /// at the same place in the new one, and at least one did. Outermost first; none inside another.
    static func wholeFolders(gone: [SyncPath], arrived: Set<SyncPath>, files: [SyncPath: SyncPath]) -> [(from: SyncPath, to: SyncPath)] {
        var result: [(from: SyncPath, to: SyncPath)] = []
        for old in gone.sorted(by: { $0.depth < $1.depth }) where !result.contains(where: { old.isWithin($0.from) }) {
            let out = files.filter { $0.value.isWithin(old) }
            guard let (firstNew, firstOld) = out.first else { continue }
            let suffix = firstOld.bytes.dropFirst(old.bytes.count)
            guard firstNew.bytes.count > suffix.count else { continue }
            let candidate = SyncPath(String(decoding: firstNew.bytes.dropLast(suffix.count), as: UTF8.self))
            guard arrived.contains(candidate), !result.contains(where: { candidate.isWithin($0.to) }),
                out.allSatisfy({ $0.key.bytes == candidate.bytes + $0.value.bytes.dropFirst(old.bytes.count) })
            else { continue }
            result.append((old, candidate))
        }
        return result
    }

    // MARK: Server → here

    private static func pairRemoteMoves(
        _ actions: [SyncAction], local: [SyncPath: LocalEntry], remote: [SyncPath: RemoteEntry], base: [SyncPath: BaseEntry]
    ) -> [SyncAction] {
        // Files gone from the server (unchanged here, not placeholders), by their content version.
        var gone: [Data: [(SyncPath, BaseEntry)]] = [:]
        for case .deleteLocal(let path, let entry) in actions where !entry.isFolder && local[path]?.isPlaceholder == false {
            gone[entry.version, default: []].append((path, entry))
        }
        guard !gone.isEmpty else { return actions }
        var arrivals: [Data: [SyncPath]] = [:]
        for action in actions {
            switch action {
            case .download(let path, let r), .placehold(let path, let r):
                if base[path] == nil, local[path] == nil { arrivals[r.version, default: []].append(path) }
            default: continue
            }
        }
        var moves: [SyncPath: (from: SyncPath, remote: RemoteEntry)] = [:]
        var used: Set<SyncPath> = []
        for (version, olds) in gone {
            guard let news = arrivals[version] else { continue }
            if olds.count == 1, news.count == 1, let r = remote[news[0]] {
                moves[news[0]] = (olds[0].0, r)
                used.insert(olds[0].0)
                continue
            }
            // Several files share the version (Apache's ETag is the size and the date, and files of
            // one size written in one clock tick share it): those whose name is the only one of
            // its kind on both sides pair by name.
            let newsByName = Dictionary(grouping: news, by: \.name)
            for (name, named) in Dictionary(grouping: olds, by: \.0.name) where named.count == 1 {
                guard let arrived = newsByName[name], arrived.count == 1, let r = remote[arrived[0]] else { continue }
                moves[arrived[0]] = (named[0].0, r)
                used.insert(named[0].0)
            }
            // One file of the version left on each side once the others paired by name: a rename
            // (a.txt → b.txt beside a folder's files of the same size and tick, moved by name).
            let oldLeft = olds.filter { !used.contains($0.0) }, newLeft = news.filter { moves[$0] == nil }
            if oldLeft.count == 1, newLeft.count == 1, oldLeft.count < olds.count, let r = remote[newLeft[0]] {
                moves[newLeft[0]] = (oldLeft[0].0, r)
                used.insert(oldLeft[0].0)
            }
        }
        guard !moves.isEmpty else { return actions }
        let newFolders = actions.compactMap { action -> (SyncPath, RemoteEntry)? in
            if case .makeLocalFolder(let path, let r) = action { return (path, r) }
            return nil
        }
        // A folder with changes here under it stays (what changed is sent again from there).
        let changedHere = actions.compactMap { action -> SyncPath? in
            if case .upload(let path, _, _) = action { return path }
            return nil
        }
        let goneFolders = actions.compactMap { action -> SyncPath? in
            if case .deleteLocal(let path, let entry) = action, entry.isFolder, !changedHere.contains(where: { $0.isWithin(path) }) { return path }
            return nil
        }
        let folderMoves = wholeFolders(gone: goneFolders, arrived: Set(newFolders.map(\.0)), files: moves.mapValues(\.from)).map { move in
            (from: move.from, to: move.to, remote: newFolders.first { $0.0 == move.to }!.1)
        }
        var result: [SyncAction] = []
        for action in actions {
            switch action {
            case .deleteLocal(let path, _) where folderMoves.contains { path.isWithin($0.from) } || used.contains(path): continue
            case .makeLocalFolder(let path, _) where folderMoves.contains { path == $0.to }: continue
            case .download(let path, _), .placehold(let path, _):
                guard let move = moves[path] else {
                    result.append(action)
                    continue
                }
                if !folderMoves.contains(where: { move.from.isWithin($0.from) }) { result.append(.moveLocal(from: move.from, to: path, move.remote)) }
            default: result.append(action)
            }
        }
        for move in folderMoves { result.append(.moveLocal(from: move.from, to: move.to, move.remote)) }
        return result
    }
}
