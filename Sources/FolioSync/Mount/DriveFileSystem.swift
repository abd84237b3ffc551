#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims
package import Folio
package import Foundation
package import FolioSystem
package import Logging
package import Synchronization

/// The drive as a FUSE file system, mounted over the replica's own folder: every program sees each
/// file under its real name, size and date, a placeholder included (its size from its stub,
/// `st_blocks` 0), and a placeholder's first open downloads it while the opener waits. Everything
/// else is the replica beneath, reached through a descriptor opened before the mount covered it,
/// so the replica stays a plain folder that holds every downloaded byte: when the mount goes, the
/// folder shows the replica again, stubs and all.
///
/// Folio's own names (stubs, the staging folder, the replica's marker, unfinished uploads) are
/// hidden and cannot be made through the mount. Each item's state is readable by any program as
/// the extended attributes `user.folio.status` (cloud, downloading, local) and
/// `user.folio.progress` (percent, while downloading).
///
/// Requests are served by threads of their own (``DriveMount``); a placeholder's open hands its
/// wait to a task and the thread goes on serving, so readers waiting on downloads never hold up
/// the rest. A signal to a waiting reader ends its `open` with `EINTR`; the download goes on.
package final class DriveFileSystem: Sendable {
    let channel: FUSEChannel
    /// The replica beneath the mount (an `O_PATH` descriptor of its folder).
    let replica: CInt
    /// The replica beneath the mount as a path (`/proc/PID/fd/N`, this process's descriptor), for
    /// the calls that have no `…at` form (extended attributes), for the sync engine, and for the
    /// user's other processes while this one lives (a provider program, `folio drive status`).
    package let replicaPath: String
    let nodes = DriveNodes()
    /// Watches the folders the kernel knows, beneath, for changes made there (see
    /// `DriveFileSystem+Coherence.swift`); nil when inotify could not be had (names then refresh
    /// when the kernel's cache expires).
    let watcher: InotifyWatcher?
    let materialize: @Sendable (String, Progress, ArrivingContents) async throws -> Void
    /// The drive's journal, for each item's state (pinned, uploading, in error); nil: none kept.
    let journal: SyncJournal?
    /// Told of each change made through the mount (a file written and closed, made, removed or
    /// renamed), by path: a pass then sends it.
    let changed: @Sendable (String) -> Void
    /// Where the drive is mounted: its files' paths as apps and programs name them.
    let folder: String
    /// A program's open waits while another process's coordinated write (in this arbiter) holds
    /// the file. Nil: opens never wait.
    let arbiter: CoordinationArbiter?
    /// The longest a program's open waits for coordinated writes (then `EBUSY`).
    static let writeWait = Duration.seconds(30)
    /// Where the content a program writes over is kept, as a version; nil: none kept.
    let versions: VersionStore?
    /// The largest file whose content is kept as a version when a program opens it to write.
    static let largestVersioned = 64 << 20
    /// Whether to ask the kernel for passthrough (tests turn it off to exercise reads and writes
    /// through this process, as where the kernel or the user's rights have none).
    let wantsPassthrough: Bool
    let logger: Logger
    /// Kernel attribute, entry and listing cache lifetime, seconds. Changes made beneath (by the
    /// sync engine) are told to the kernel as they happen (`DriveFileSystem+Coherence.swift`), so
    /// this bounds only what a lost inotify event could leave stale.
    static let cacheSeconds: UInt64 = 10

    struct State {
        /// Opens waiting for a download, by request number, with the path each waits for.
        var waiting: [UInt64: String] = [:]
        /// Downloads under way for opens, by path: how far each is, its file as it arrives, and the
        /// task the opens wait for.
        var downloading: [String: (progress: Progress, arriving: ArrivingContents, task: Task<Void, any Error>)] = [:]
        /// Files read while they arrive, by handle: their download, and the size they will have.
        var arrivingFiles: [UInt64: (arriving: ArrivingContents, size: Int64)] = [:]
        /// Open folders' listings, by handle.
        var listings: [UInt64: Listing] = [:]
        var nextListing: UInt64 = 1
        /// Whether opened files are served by the kernel from the replica's file (FUSE
        /// passthrough), as agreed at the start.
        var passthrough = false
        /// The files open for writing, by handle, with their paths when opened: closed, they are
        /// reported changed.
        var writing: [UInt64: String] = [:]
        /// The backing files of files open with passthrough, by file, and each handle's file.
        var backings: [Backing.Key: Backing] = [:]
        var backingOfHandle: [UInt64: Backing.Key] = [:]
        /// The files whose content was last kept as a version, by path, as they were then.
        var kept: [String: LocalFingerprint] = [:]
        /// Whether files opened bypassing the page cache can be mapped shared (kernel 6.6); files
        /// are read as they arrive only then.
        var mapsUncachedFiles = false
        /// Why passthrough is off, logged once.
        var passthroughRefused: String?
    }

    let state = Mutex(State())

    /// A replica's file registered with the kernel for passthrough: one a file, shared by its
    /// opens, closed with the last (kept until each open's release: the opener takes it after the
    /// open's reply, in its own time).
    struct Backing {
        struct Key: Hashable {
            var device: UInt64
            var inode: UInt64
        }

        /// The kernel's number for it.
        var id: CInt
        /// The descriptor registered.
        var file: CInt
        /// Whether it was opened for writing (opens that write cannot share it otherwise).
        var writes: Bool
        var opens: Int
    }

    /// One name of a folder's listing as the mount shows it.
    struct DirectoryEntry {
        var name: String
        var inode: UInt64
        var type: UInt32
        /// A placeholder: its stub is what the folder holds.
        var placeholder = false
    }

    /// An open folder: its descriptor in the replica (closed with it), and its entries as read
    /// at its opening.
    final class Listing: Sendable {
        let folder: CInt
        let entries: [DirectoryEntry]

        init(folder: CInt, entries: [DirectoryEntry]) {
            self.folder = folder
            self.entries = entries
        }

        deinit { close(folder) }
    }

    /// Serves the replica at `replica` (an `O_PATH` folder descriptor this object then owns) on
    /// `channel`. `materialize` downloads the placeholder at a replica-relative path, telling the
    /// progress how far it is and the arriving contents where its file is written.
    package init(
        channel: FUSEChannel, replica: CInt, journal: SyncJournal?, materialize: @escaping @Sendable (String, Progress, ArrivingContents) async throws -> Void,
        changed: @escaping @Sendable (String) -> Void, folder: String, arbiter: CoordinationArbiter?, versions: VersionStore?, passthrough: Bool = true,
        logger: Logger
    ) {
        wantsPassthrough = passthrough
        self.folder = folder
        self.arbiter = arbiter
        self.versions = versions
        self.journal = journal
        self.changed = changed
        let forward = ForwardingTarget()
        do {
            watcher = try InotifyWatcher(logger: logger) { events in forward.target?.forgetStale(events) }
        } catch {
            logger.notice("the drive's mount cannot watch the replica: programs see changes a second late", metadata: ["error": "\(error)"])
            watcher = nil
        }
        self.channel = channel
        self.replica = replica
        replicaPath = "/proc/\(getpid())/fd/\(replica)"
        self.materialize = materialize
        self.logger = logger
        forward.target = self
        watchBeneath("")
    }

    /// The file system the watcher's handler reaches, set once it exists.
    private final class ForwardingTarget: @unchecked Sendable {
        weak var target: DriveFileSystem?
    }

    deinit {
        watcher?.stop()
        close(replica)
    }

    /// Whether `name` is one of Folio's own, never shown: a stub, or in the root the staging
    /// folder or the replica's marker; unfinished uploads anywhere.
    /// How many reads this process has served (none for files the kernel reads itself, with
    /// passthrough).
    package let readsServed = Atomic<Int>(0)

    /// Whether the kernel reads and writes opened files itself (passthrough).
    package var passthrough: Bool { state.withLock { $0.passthrough } }

    /// How many opens wait for a download now.
    package var waitingOpens: Int { state.withLock { $0.waiting.count } }

    /// How many downloads for programs' opens are under way (a file read as it arrives goes on
    /// downloading after its reader is done).
    package var downloadsUnderWay: Int { state.withLock { $0.downloading.count } }

    static func isHidden(_ name: String, inRoot: Bool) -> Bool {
        if PlaceholderStub.isStubName(name) || name.hasPrefix(".folio-upload-") { return true }
        return inRoot && (name == LocalReplica.stagingName || name == LocalReplica.markerName)
    }

    /// The path below the replica for `name` in the folder at `folder` ("" for the root).
    static func child(_ name: String, of folder: String) -> String { folder.isEmpty ? name : folder + "/" + name }

    /// `path` as apps and programs name it.
    func visible(_ path: String) -> String { path.isEmpty ? folder : folder + "/" + path }

    /// `path` as the `…at` calls take it ("." for the root).
    static func relative(_ path: String) -> String { path.isEmpty ? "." : path }

    /// An item as the mount shows it.
    struct Item {
        var status: stat
        /// A placeholder: a stub stands for it.
        var placeholder: Bool
    }

    /// The item at `path`: the replica's own, or the placeholder a stub beside it stands for.
    /// Returns an `errno` value when there is none.
    func item(_ path: String) -> Result<Item, CErrno> {
        var status = stat()
        if fstatat(replica, Self.relative(path), &status, AT_SYMLINK_NOFOLLOW) == 0 { return .success(Item(status: status, placeholder: false)) }
        let failure = errno
        guard failure == ENOENT, !path.isEmpty else { return .failure(CErrno(failure)) }
        return placeholder(path).map { .success($0) } ?? .failure(CErrno(ENOENT))
    }

    /// The placeholder at `path`, read from its stub.
    func placeholder(_ path: String) -> Item? {
        var status = stat()
        let stubPath = path + PlaceholderStub.suffix
        guard fstatat(replica, stubPath, &status, AT_SYMLINK_NOFOLLOW) == 0, (status.st_mode & S_IFMT) == S_IFREG,
            let stub = PlaceholderStub.read(at: replicaPath + "/" + stubPath)
        else { return nil }
        status.st_mode = S_IFREG | FileCreationMask.fileMode
        status.st_size = Int(stub.size)
        status.st_blocks = 0
        status.st_nlink = 1
        if let modified = stub.modified {
            status.st_mtim = timespec(tv_sec: Int(modified.rounded(.down)), tv_nsec: Int((modified - modified.rounded(.down)) * 1e9))
        }
        return Item(status: status, placeholder: true)
    }

    /// `status` in the protocol's form.
    static func attributes(_ status: stat) -> fuse_attr {
        var attributes = fuse_attr()
        attributes.ino = UInt64(status.st_ino)
        attributes.size = UInt64(max(0, status.st_size))
        attributes.blocks = UInt64(max(0, status.st_blocks))
        attributes.atime = UInt64(max(0, status.st_atim.tv_sec))
        attributes.atimensec = UInt32(status.st_atim.tv_nsec)
        attributes.mtime = UInt64(max(0, status.st_mtim.tv_sec))
        attributes.mtimensec = UInt32(status.st_mtim.tv_nsec)
        attributes.ctime = UInt64(max(0, status.st_ctim.tv_sec))
        attributes.ctimensec = UInt32(status.st_ctim.tv_nsec)
        attributes.mode = status.st_mode
        attributes.nlink = UInt32(status.st_nlink)
        attributes.uid = status.st_uid
        attributes.gid = status.st_gid
        attributes.rdev = UInt32(status.st_rdev)
        attributes.blksize = UInt32(status.st_blksize)
        return attributes
    }

    /// An entry reply for `name` in `parent`, whose item is `item`: the kernel now holds its node.
    func entry(_ name: String, in parent: UInt64, _ item: Item) -> fuse_entry_out {
        var entry = fuse_entry_out()
        entry.nodeid = nodes.remember(name, in: parent)
        if item.status.st_mode & S_IFMT == S_IFDIR, let path = nodes.path(entry.nodeid) { watchBeneath(path) }
        entry.entry_valid = Self.cacheSeconds
        entry.attr_valid = Self.cacheSeconds
        entry.attr = Self.attributes(item.status)
        return entry
    }

    /// Answers one request; false once the kernel said it is done (`FUSE_DESTROY`).
    func serve(_ request: FUSERequest, readBuffer: UnsafeMutableRawBufferPointer) -> Bool {
        let unique = request.header.unique
        do throws(CErrno) {
            switch Int32(bitPattern: request.opcode) {
            case Int32(FUSE_INIT.rawValue): try initialize(request)
            case Int32(FUSE_DESTROY.rawValue):
                channel.reply(unique)
                return false
            case Int32(FUSE_FORGET.rawValue):
                if let forget = request.argument(fuse_forget_in.self) { nodes.forget(request.header.nodeid, forget.nlookup) }
            case Int32(FUSE_BATCH_FORGET.rawValue): batchForget(request)
            case Int32(FUSE_INTERRUPT.rawValue): interrupt(request)
            case Int32(FUSE_LOOKUP.rawValue): try lookup(request)
            case Int32(FUSE_GETATTR.rawValue): try getAttributes(request)
            case Int32(FUSE_SETATTR.rawValue): try setAttributes(request)
            case Int32(FUSE_OPENDIR.rawValue): try openDirectory(request)
            case Int32(FUSE_READDIR.rawValue): try readDirectory(request, into: readBuffer, plus: false)
            case Int32(FUSE_READDIRPLUS.rawValue): try readDirectory(request, into: readBuffer, plus: true)
            case Int32(FUSE_RELEASEDIR.rawValue): releaseDirectory(request)
            case Int32(FUSE_OPEN.rawValue): try open(request)
            case Int32(FUSE_CREATE.rawValue): try create(request)
            case Int32(FUSE_READ.rawValue): try read(request, into: readBuffer)
            case Int32(FUSE_WRITE.rawValue): try write(request)
            case Int32(FUSE_FLUSH.rawValue), Int32(FUSE_ACCESS.rawValue), Int32(FUSE_FSYNCDIR.rawValue): channel.reply(unique)
            case Int32(FUSE_RELEASE.rawValue): release(request)
            case Int32(FUSE_FSYNC.rawValue): try synchronize(request)
            case Int32(FUSE_MKDIR.rawValue): try makeDirectory(request)
            case Int32(FUSE_UNLINK.rawValue): try remove(request, folder: false)
            case Int32(FUSE_RMDIR.rawValue): try remove(request, folder: true)
            case Int32(FUSE_RENAME.rawValue): try rename(request, flags: nil)
            case Int32(FUSE_RENAME2.rawValue): try rename(request, flags: request.argument(fuse_rename2_in.self)?.flags ?? 0)
            case Int32(FUSE_SYMLINK.rawValue): try makeSymbolicLink(request)
            case Int32(FUSE_READLINK.rawValue): try readLink(request, into: readBuffer)
            case Int32(FUSE_LINK.rawValue): try link(request)
            case Int32(FUSE_STATFS.rawValue): try fileSystemStatus(request)
            case Int32(FUSE_GETXATTR.rawValue): try getExtendedAttribute(request, into: readBuffer)
            case Int32(FUSE_LISTXATTR.rawValue): try listExtendedAttributes(request, into: readBuffer)
            case Int32(FUSE_SETXATTR.rawValue): try setExtendedAttribute(request)
            case Int32(FUSE_REMOVEXATTR.rawValue): try removeExtendedAttribute(request)
            case Int32(FUSE_FALLOCATE.rawValue): try allocate(request)
            default: channel.reply(unique, error: ENOSYS)
            }
        } catch {
            channel.reply(unique, error: error.code)
        }
        return true
    }

    private func initialize(_ request: FUSERequest) throws(CErrno) {
        guard let offer = request.argument(fuse_init_in.self) else { throw CErrno(EINVAL) }
        guard offer.major == 7 else { throw CErrno(EPROTO) }
        var answer = fuse_init_out()
        answer.major = 7
        answer.minor = min(offer.minor, UInt32(FUSE_KERNEL_MINOR_VERSION))
        answer.max_readahead = offer.max_readahead
        let wanted = UInt32(FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_ATOMIC_O_TRUNC | FUSE_AUTO_INVAL_DATA | FUSE_PARALLEL_DIROPS | FUSE_DO_READDIRPLUS)
        answer.flags = offer.flags & wanted
        // Passthrough (kernel 6.9): reads and writes of an open file go from the kernel to the
        // replica's file, at the disk's speed. Registering a backing file needs CAP_SYS_ADMIN.
        let extended = offer.flags & UInt32(FUSE_INIT_EXT) != 0
        if wantsPassthrough, extended, offer.flags2 & CFOLIO_FUSE_PASSTHROUGH_FLAGS2 != 0, geteuid() == 0 {
            answer.minor = min(offer.minor, 40)
            answer.flags |= UInt32(FUSE_INIT_EXT)
            answer.flags2 |= CFOLIO_FUSE_PASSTHROUGH_FLAGS2
            answer.unused.0 = 1  // max_stack_depth: the replica is on a file system that stacks on none
            state.withLock { $0.passthrough = true }
        }
        // Files opened bypassing the page cache (read as they arrive; an open that cannot share a
        // passthrough backing) can still be mapped shared (kernel 6.6): programs map files to read them.
        if extended, offer.flags2 & CFOLIO_FUSE_DIRECT_IO_ALLOW_MMAP_FLAGS2 != 0 {
            answer.minor = max(answer.minor, min(offer.minor, 39))
            answer.flags |= UInt32(FUSE_INIT_EXT)
            answer.flags2 |= CFOLIO_FUSE_DIRECT_IO_ALLOW_MMAP_FLAGS2
            state.withLock { $0.mapsUncachedFiles = true }
        }
        answer.max_background = 64
        answer.congestion_threshold = 48
        answer.max_write = UInt32(FUSEChannel.maximumWrite)
        answer.time_gran = 1
        channel.reply(request.header.unique, answer)
        logger.info("the drive's mount is ready", metadata: ["protocol": "7.\(answer.minor)", "passthrough": "\(state.withLock { $0.passthrough })"])
    }

    private func batchForget(_ request: FUSERequest) {
        guard let batch = request.argument(fuse_batch_forget_in.self) else { return }
        let size = MemoryLayout<fuse_forget_one>.size
        for index in 0..<Int(batch.count) {
            guard let one = request.argument(fuse_forget_one.self, at: MemoryLayout<fuse_batch_forget_in>.size + index * size) else { return }
            nodes.forget(one.nodeid, one.nlookup)
        }
    }

    /// A signal reached a process waiting in a request: an open waiting for its download ends
    /// with `EINTR` (the download goes on); any other request finishes as it would have.
    private func interrupt(_ request: FUSERequest) {
        guard let interrupted = request.argument(fuse_interrupt_in.self)?.unique,
            state.withLock({ $0.waiting.removeValue(forKey: interrupted) }) != nil
        else { return }
        channel.reply(interrupted, error: EINTR)
    }
}

/// An `errno` value as an error.
struct CErrno: Error {
    let code: CInt
    init(_ code: CInt) { self.code = code }
    /// The current `errno`.
    static var last: CErrno { CErrno(errno) }
}
