#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
public import SystemPackage

/// Walks a folder tree with raw `readdir` and `fstatat` calls — the hot path of indexing, where
/// Foundation's per-URL resource values cost 20–35 times as much. Depth first with an explicit
/// stack of folder paths (memory grows with the number of folders waiting, not files), one folder
/// open at a time, symbolic links reported but never followed (no loops), and every entry that
/// cannot be read reported to `skipped` with a reason instead of stopping the walk.
public struct DirectoryScanner: Sendable {
    /// One entry found.
    public struct Entry: Sendable {
        /// The folder it is in.
        public var folder: String
        /// Its name.
        public var name: String
        /// Its full path.
        public var path: String
        /// Its status (`lstat`).
        public var status: FileStatus
        /// The names of its extended attributes, when the scanner reads them
        /// (`readsAttributeNames`) and the kernel lists them by folder (nil otherwise: read them
        /// by path).
        public var attributeNames: [String]?
    }

    /// Why an entry was left out.
    public enum Skip: Sendable, CustomStringConvertible {
        /// A folder that cannot be opened or read (permissions, vanished).
        case unreadableFolder(Errno)
        /// A name that is not valid UTF-8 (it could not be named in the index or a URL faithfully).
        case invalidName
        /// A path longer than `maximumPathBytes`.
        case pathTooLong
        /// The entry vanished or cannot be examined.
        case unreadableEntry(Errno)

        public var description: String {
            switch self {
            case .unreadableFolder(let error): "folder not readable: \(error)"
            case .invalidName: "name is not valid UTF-8"
            case .pathTooLong: "path longer than PATH_MAX"
            case .unreadableEntry(let error): "entry not readable: \(error)"
            }
        }
    }

    /// The longest path walked (PATH_MAX less the terminator).
    public var maximumPathBytes = 4095

    /// Whether each entry's extended attributes are listed as it is read (not a symbolic link's).
    public var readsAttributeNames = false

    /// Creates a scanner.
    public init() {}

    /// Walks everything below `root` (not `root` itself). `visit` gets each entry; for a folder, it
    /// returns whether to walk into it. `skipped` gets each path left out, with the reason.
    public func scan(_ root: String, visit: (Entry) -> Bool, skipped: (String, Skip) -> Void) {
        var pending = [root]
        while let folder = pending.popLast() {
            var children: [String] = []
            list(folder, visit: { entry in
                if visit(entry), entry.status.kind == .directory { children.append(entry.path) }
            }, skipped: skipped)
            // Reverse so that the walk takes a folder's subfolders in the order they were listed.
            pending.append(contentsOf: children.reversed())
        }
    }

    /// Lists one folder: `visit` gets each entry (not `.` and `..`), `skipped` each entry left out.
    /// Returns false when the folder itself could not be opened or read to the end (then `skipped`
    /// got the folder's path and the reason, and the entries visited are not all there are).
    /// With `reading`, the folder opened is that one (a descriptor's `/proc/self/fd` path: the
    /// folder a check resolved), its entries named below `folder`. With `expecting`, the folder
    /// opened must be that device and inode (what its parent's listing found at its name, links
    /// not followed): when a name on the way was swapped for a link since, what opened is not it,
    /// and the folder is reported gone (`.notDirectory`) rather than listed.
    @discardableResult
    public func list(
        _ folder: String, reading location: String? = nil, expecting identity: (device: UInt64, inode: UInt64)? = nil, visit: (Entry) -> Void,
        skipped: (String, Skip) -> Void
    ) -> Bool {
        guard let stream = opendir(location ?? PathRedirect.physical(folder)) else {
            skipped(folder, .unreadableFolder(Errno(rawValue: errno)))
            return false
        }
        defer { closedir(stream) }
        let descriptor = FileDescriptor(rawValue: dirfd(stream))
        if let identity, let opened = try? FileStatus(of: descriptor), opened.device != identity.device || opened.inode != identity.inode {
            skipped(folder, .unreadableFolder(.notDirectory))
            return false
        }
        while true {
            errno = 0
            guard let record = readdir(stream) else {
                guard errno == 0 else {
                    skipped(folder, .unreadableFolder(Errno(rawValue: errno)))
                    return false
                }
                return true
            }
            DirectoryRecord.withName(record) { bytes, cName in
                if bytes.count == 1 && bytes[bytes.startIndex] == UInt8(ascii: ".") { return }
                if bytes.count == 2 && bytes.allSatisfy({ $0 == UInt8(ascii: ".") }) { return }
                guard let name = String(validUTF8: bytes) else {
                    skipped(folder + "/" + String(decoding: bytes, as: UTF8.self), .invalidName)
                    return
                }
                let path = folder == "/" ? "/" + name : folder + "/" + name
                guard path.utf8.count <= maximumPathBytes else {
                    skipped(path, .pathTooLong)
                    return
                }
                let status: FileStatus
                do {
                    status = try FileStatus(in: descriptor, name: cName)
                } catch {
                    skipped(path, .unreadableEntry((error as? Errno) ?? .ioError))
                    return
                }
                var attributeNames: [String]?
                if readsAttributeNames, status.kind != .symbolicLink {
                    // A failure here leaves them to be read by path, which says why.
                    attributeNames = (try? descriptor.extendedAttributeNames(ofEntry: cName)) ?? nil
                }
                visit(Entry(folder: folder, name: name, path: path, status: status, attributeNames: attributeNames))
            }
        }
    }
}
