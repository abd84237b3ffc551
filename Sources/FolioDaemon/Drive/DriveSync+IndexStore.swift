package import Folio
package import FolioSync
import Foundation

extension DriveSync {
    /// The drive on `provider`, in the folders of `paths`, for a process without a daemon's pool
    /// (`folio drive`, the sync benchmark): its journal in a pool of its own on the index
    /// database, created and migrated when needed.
    package init(provider: any FileProvider, paths: FolioPaths = FolioPaths(), replicaRoot: String? = nil) throws {
        try FolioPaths.makePrivateDirectory(paths.stateDirectory)
        try self.init(provider: provider, paths: paths, database: IndexStore(path: paths.indexDatabase).pool, replicaRoot: replicaRoot)
    }
}
