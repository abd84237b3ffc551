import FolioSystem
import SystemPackage

/// What the arbiter last knew of an item: enough to tell whether a change event shows something
/// presenters have not heard of yet (a coordinated write already told them about its result).
struct ItemStamp: Equatable {
    var exists: Bool
    var isDirectory = false
    var inode: UInt64 = 0
    var size: Int64 = 0
    var modificationTime: Double = 0
    var mode: UInt32 = 0

    static let absent = ItemStamp(exists: false)

    /// The item's stamp now (one `lstat`).
    init(path: String) {
        guard let status = try? FileStatus(path: FilePath(path)) else {
            self = .absent
            return
        }
        exists = true
        isDirectory = status.kind == .directory
        inode = status.inode
        size = status.size
        modificationTime = status.modificationTime
        mode = status.mode
    }

    init(exists: Bool) { self.exists = exists }
}
