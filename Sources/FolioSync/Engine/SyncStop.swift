/// Why a sync pass stopped before changing anything: each is a state the user must look at, with
/// the way out named.
package enum SyncStop: Error, Equatable, CustomStringConvertible {
    /// The replica folder cannot be read (unmounted, permissions).
    case replicaUnreadable(String, String)
    /// The replica folder lacks its marker file although it synced before: it may have been wiped,
    /// replaced or unmounted, and syncing it would delete the server's copies.
    case replicaMarkerMissing(String)
    /// The server's root lacks the drive's marker although this device synced with it before: the
    /// server's copy may have been emptied or replaced.
    case remoteMarkerMissing
    /// The server's marker cannot be read.
    case remoteMarkerUnreadable(String)

    package var description: String {
        switch self {
        case .replicaUnreadable(let root, let reason):
            "the replica folder \(root) cannot be read (\(reason)); nothing was synced"
        case .replicaMarkerMissing(let root):
            "the replica folder \(root) lost its \(LocalReplica.markerName) marker (wiped, replaced or unmounted?); nothing was synced or deleted. "
                + "If the folder is right, run `folio drive repair` to merge it with the server without deleting anything"
        case .remoteMarkerMissing:
            "the server's drive lost its \(RemoteTree.markerPath) marker (emptied or replaced?); nothing was synced or deleted. "
                + "Run `folio drive repair` to merge this device's copy back into the server"
        case .remoteMarkerUnreadable(let reason):
            "the server's drive marker \(RemoteTree.markerPath) cannot be read (\(reason)); nothing was synced"
        }
    }
}
