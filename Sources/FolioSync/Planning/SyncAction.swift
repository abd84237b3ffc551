/// One step of a sync pass, decided by ``SyncPlanner``.
enum SyncAction: Equatable, Sendable {
    /// Send the local file: create it (no remote item, `base` nil), modify it against the base
    /// version (`remote` still at the base), or create it again after the server deleted it
    /// while it changed here (`base` set, `remote` nil).
    case upload(SyncPath, base: BaseEntry?, remote: RemoteEntry?)
    /// Bring the remote file here (a local file it replaces is kept as a version first; a
    /// placeholder it materializes is removed).
    case download(SyncPath, RemoteEntry)
    /// Stand for the remote file with a placeholder (written or brought up to date): its content
    /// stays on the server until it is wanted.
    case placehold(SyncPath, RemoteEntry)
    /// Remove a placeholder that stands for nothing on the server (and was never synced).
    case removeStub(SyncPath)
    /// Both sides have content that may differ and no base says which is newer: compare the
    /// contents; if they differ, keep both (the server's keeps the name, the local one becomes a
    /// conflict version).
    case reconcile(SyncPath, RemoteEntry)
    /// The local side deleted an item the server still has at its base version.
    case deleteRemote(SyncPath, BaseEntry)
    /// The server no longer lists an item unchanged here: confirm its absence, then delete it here
    /// (a file's bytes are kept as a version first).
    case deleteLocal(SyncPath, BaseEntry)
    /// Create a folder here for a remote one.
    case makeLocalFolder(SyncPath, RemoteEntry)
    /// Create a folder on the server for a local one.
    case makeRemoteFolder(SyncPath)
    /// Both sides have the item and agree: record the base without a transfer.
    case adopt(SyncPath, BaseEntry)
    /// Gone on both sides: drop the base.
    case forget(SyncPath)
    /// A file on one side is a folder on the other: nothing is changed; the item is reported.
    case typeClash(SyncPath)
    /// The item at `from` was moved here to `to`: move it on the server (a folder with everything
    /// in it); its base (and those below it) follow.
    case moveRemote(from: SyncPath, to: SyncPath, BaseEntry)
    /// The server moved the item at `from` to `to`: move it here.
    case moveLocal(from: SyncPath, to: SyncPath, RemoteEntry)

    /// The path the action is about.
    var path: SyncPath {
        switch self {
        case .upload(let path, _, _), .download(let path, _), .placehold(let path, _), .removeStub(let path), .reconcile(let path, _), .deleteRemote(let path, _), .deleteLocal(let path, _),
            .makeLocalFolder(let path, _), .makeRemoteFolder(let path), .adopt(let path, _), .forget(let path), .typeClash(let path),
            .moveRemote(_, let path, _), .moveLocal(_, let path, _):
            path
        }
    }

    /// Every path the action changes: its own, and where a move takes the item from.
    var paths: [SyncPath] {
        switch self {
        case .moveRemote(let from, let to, _), .moveLocal(let from, let to, _): [from, to]
        default: [path]
        }
    }

    /// Whether the action deletes something on either side.
    var isDeletion: Bool {
        switch self {
        case .deleteRemote, .deleteLocal: true
        default: false
        }
    }
}
