#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims
public import SystemPackage

/// An item a client named, resolved once: opened with `O_PATH`, so that what it is (its status,
/// its identity, its location, read back from the descriptor) and every later use (`fstat`, `*at`
/// calls, a fresh open through `/proc/self/fd`) concern the same inode, whatever the path names by
/// then. A path swapped for a symbolic link after the check leads nowhere new.
///
/// An item that does not exist yet (a coordinated create) resolves to the nearest folder that
/// does, with the names still missing below it.
public final class ResolvedItem: Sendable {
    /// The `O_PATH` descriptor of the item (or of the nearest existing folder above it).
    public let descriptor: FileDescriptor
    /// What the descriptor is, read from it once at resolution.
    public let status: FileStatus
    /// The item's real location: the path the kernel gives for the descriptor, with the missing
    /// names appended. No symbolic link, `.` or `..` in it.
    public let path: String
    /// The names below the descriptor's folder that do not exist yet (empty when the item exists).
    public let missing: [String]

    private init(descriptor: FileDescriptor, status: FileStatus, path: String, missing: [String]) {
        self.descriptor = descriptor
        self.status = status
        self.path = path
        self.missing = missing
    }

    deinit { try? descriptor.close() }

    /// Whether the item exists (the descriptor is the item, not a folder above it).
    public var exists: Bool { missing.isEmpty }

    /// The descriptor as a path this process can open anew: the same inode.
    public var descriptorPath: String { "/proc/self/fd/\(descriptor.rawValue)" }

    /// Why a path could not be resolved.
    public enum Failure: Error, Equatable, Sendable {
        /// Not an absolute path, or one with a NUL byte.
        case notAbsolute
        /// Nothing there, and no folder above it either (with `allowMissing`, only when `/` itself is missing).
        case missing
        /// A name in the path is a symbolic link that leads nowhere: creating through it would
        /// make an item wherever it points.
        case danglingLink(String)
        /// The path leaves the folder it was to stay in.
        case outside
        /// Any other failure of the kernel's.
        case system(Errno)
    }

    /// Resolves the absolute `path` (following symbolic links as the kernel does). With
    /// `allowMissing`, an item that does not exist resolves to its nearest existing folder and the
    /// missing names (none of which may be a link that leads nowhere). Paths in a folder this
    /// process reaches elsewhere (``PathRedirect``: the drive's replica beneath its mount) are
    /// opened there.
    public static func resolve(_ path: String, allowMissing: Bool = false) throws(Failure) -> ResolvedItem {
        guard path.hasPrefix("/"), !path.utf8.contains(0) else { throw .notAbsolute }
        return try walk(path.split(separator: "/", omittingEmptySubsequences: true).map(String.init), allowMissing: allowMissing) { names in
            PathRedirect.physical("/" + names.joined(separator: "/")).withCString { Glibc.open($0, CFOLIO_O_PATH | O_CLOEXEC) }
        }
    }

    /// Resolves `relative` beneath `folder` (`openat2` with `RESOLVE_BENEATH` and
    /// `RESOLVE_NO_MAGICLINKS`): neither `..`, an absolute link nor a `/proc` link may lead out of
    /// it. With `allowMissing`, as ``resolve(_:allowMissing:)``.
    public static func resolve(_ relative: String, beneath folder: ResolvedItem, allowMissing: Bool = false) throws(Failure) -> ResolvedItem {
        guard !relative.hasPrefix("/"), !relative.utf8.contains(0), folder.exists else { throw .outside }
        return try walk(relative.split(separator: "/", omittingEmptySubsequences: true).map(String.init), allowMissing: allowMissing) { names in
            cfolio_openat2(
                folder.descriptor.rawValue, names.isEmpty ? "." : names.joined(separator: "/"), UInt64(CFOLIO_O_PATH),
                UInt64(CFOLIO_RESOLVE_BENEATH | CFOLIO_RESOLVE_NO_MAGICLINKS))
        }
    }

    /// Resolves the absolute `path`, confined to the folder it lies in, of the folders others may
    /// write (apps: their containers, the folders granted them): each folder in `folders`, and
    /// each folder of a folder in `parents` (whose own name must not be a link). From the
    /// innermost such folder's descriptor (``resolve(_:beneath:allowMissing:)``), so a link
    /// someone put there never leads out of it. A path in none of them resolves as the kernel
    /// follows it.
    public static func resolve(
        _ path: String, confinedBelow parents: [String], to folders: [String] = [], allowMissing: Bool = false
    ) throws(Failure) -> ResolvedItem {
        func isInside(_ folder: String) -> Bool {
            folder != "/" && path.utf8.count > folder.utf8.count + 1 && path.utf8.starts(with: folder.utf8)
                && path.utf8.dropFirst(folder.utf8.count).first == UInt8(ascii: "/")
        }
        // (the folder, whether it is a folder of a parent: opened as an entry, never followed)
        var confining: (folder: String, isEntry: Bool)?
        for folder in folders where isInside(folder) && folder.utf8.count > (confining?.folder.utf8.count ?? -1) { confining = (folder, false) }
        for parent in parents where isInside(parent) {
            let first = path.utf8.dropFirst(parent.utf8.count + 1).prefix { $0 != UInt8(ascii: "/") }
            let folder = parent + "/" + String(decoding: first, as: UTF8.self)
            if folder.utf8.count > (confining?.folder.utf8.count ?? -1) { confining = (folder, true) }
        }
        guard let confining else { return try resolve(path, allowMissing: allowMissing) }
        let slash = confining.folder.utf8.lastIndex(of: UInt8(ascii: "/"))!
        let folder =
            confining.isEntry
            ? try resolve(String(confining.folder[..<slash])).entry(String(confining.folder[confining.folder.index(after: slash)...]))
            : try resolve(confining.folder)
        guard folder.status.kind == .directory else { throw .outside }
        guard path != confining.folder else { return folder }
        return try resolve(String(decoding: path.utf8.dropFirst(confining.folder.utf8.count + 1), as: UTF8.self), beneath: folder, allowMissing: allowMissing)
    }

    /// Opens `names` with `open` (a descriptor, or -1 and errno); with `allowMissing`, drops
    /// missing names from the end until what is left opens, and keeps them.
    private static func walk(_ names: [String], allowMissing: Bool, open: ([String]) -> Int32) throws(Failure) -> ResolvedItem {
        var names = names
        var missing: [String] = []
        while true {
            let fd = open(names)
            if fd >= 0 {
                let item = try adopt(FileDescriptor(rawValue: fd), missing: missing)
                if let first = missing.first {
                    // Creating `first` here must make it here: it may not be a link that leads nowhere.
                    guard item.status.kind == .directory else { throw .system(.notDirectory) }
                    if (try? FileStatus(in: item.descriptor, name: first)) != nil { throw .danglingLink(item.path + "/" + first) }
                }
                return item
            }
            let code = Errno(rawValue: errno)
            if code == .improperLink { throw .outside }
            guard code == .noSuchFileOrDirectory, allowMissing, let last = names.popLast(), last != ".." else {
                throw code == .noSuchFileOrDirectory ? .missing : .system(code)
            }
            if last != "." { missing.insert(last, at: 0) }
        }
    }

    /// For an item that does not exist yet, its nearest existing folder as an item of its own
    /// (the same inode, a descriptor of its own); the item itself when it exists.
    public func existingPart() throws(Failure) -> ResolvedItem {
        guard !exists else { return self }
        let copy = fcntl(descriptor.rawValue, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .system(Errno(rawValue: errno)) }
        return try Self.adopt(FileDescriptor(rawValue: copy), missing: [])
    }

    /// The folder this folder is in (`..` from its descriptor: whatever names lead to it now).
    public func parent() throws(Failure) -> ResolvedItem {
        guard exists, status.kind == .directory else { throw .system(.notDirectory) }
        let fd = openat(descriptor.rawValue, "..", CFOLIO_O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(Errno(rawValue: errno)) }
        return try Self.adopt(FileDescriptor(rawValue: fd), missing: [])
    }

    /// The entry `name` of this folder itself, opened from its descriptor without following a
    /// link: a symbolic link is the link, never what it points to.
    public func entry(_ name: String) throws(Failure) -> ResolvedItem {
        guard exists, status.kind == .directory else { throw .system(.notDirectory) }
        guard !name.isEmpty, name != ".", name != "..", !name.utf8.contains(UInt8(ascii: "/")), !name.utf8.contains(0) else { throw .outside }
        let fd = openat(descriptor.rawValue, name, CFOLIO_O_PATH | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw errno == ENOENT ? .missing : .system(Errno(rawValue: errno)) }
        return try Self.adopt(FileDescriptor(rawValue: fd), missing: [])
    }

    /// Opens `descriptor` as an item the caller already holds (an `O_PATH` or ordinary descriptor
    /// this object then owns).
    public static func adopt(_ descriptor: FileDescriptor) throws(Failure) -> ResolvedItem {
        try adopt(descriptor, missing: [])
    }

    private static func adopt(_ descriptor: FileDescriptor, missing: [String]) throws(Failure) -> ResolvedItem {
        do {
            let status = try FileStatus(of: descriptor)
            let real = try location(of: descriptor)
            let path = missing.isEmpty ? real : (real == "/" ? "" : real) + "/" + missing.joined(separator: "/")
            return ResolvedItem(descriptor: descriptor, status: status, path: path, missing: missing)
        } catch {
            try? descriptor.close()
            throw .system(error)
        }
    }

    /// Where the open `descriptor` is: the kernel's path for it (`/proc/self/fd`). An item whose
    /// last name was removed since it was opened has none.
    public static func location(of descriptor: FileDescriptor) throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let link = "/proc/self/fd/\(descriptor.rawValue)"
        let count = try valueOrErrno { readlink(link, &buffer, buffer.count - 1) }
        let text = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard text.hasPrefix("/"), !text.hasSuffix(" (deleted)") else { throw .noSuchFileOrDirectory }
        return text
    }

    /// Opens the item anew for reading or writing (through `/proc/self/fd`: the same inode);
    /// `nonBlocking` keeps a FIFO swapped in from blocking the open.
    public func open(_ mode: FileDescriptor.AccessMode, nonBlocking: Bool = true) throws(Errno) -> FileDescriptor {
        guard exists else { throw .noSuchFileOrDirectory }
        let flags = mode.rawValue | (nonBlocking ? O_NONBLOCK : 0)
        return FileDescriptor(rawValue: try valueOrErrno { cfolio_reopen(descriptor.rawValue, flags) })
    }

    /// The value of the item's extended attribute `name`, nil when it has none or cannot be read.
    public func extendedAttribute(named name: String) -> [UInt8]? {
        guard exists else { return nil }
        return try? FilePath(descriptorPath).extendedAttribute(named: name, followSymlinks: true) ?? nil
    }

    /// Sets the item's extended attribute `name` (through its descriptor: the item checked).
    public func setExtendedAttribute(named name: String, to value: [UInt8]) throws(Errno) {
        guard exists else { throw .noSuchFileOrDirectory }
        try FilePath(descriptorPath).setExtendedAttribute(named: name, to: value)
    }

    /// The item's incarnation mark (``FileIncarnation``), read through its descriptor.
    public var incarnation: String? { exists ? FileIncarnation.mark(of: descriptor) : nil }
}
