#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims
import Folio
import FolioSystem
import Foundation
import Logging
import Synchronization
import SystemPackage

/// The mount's folders: a listing read whole at its opening (stubs shown as their documents, Folio's
/// names left out), given to the kernel with each entry's attributes (READDIRPLUS).
extension DriveFileSystem {
    func openDirectory(_ request: FUSERequest) throws(CErrno) {
        let path = try path(of: request)
        let folder = openat(replica, Self.relative(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard folder >= 0 else { throw CErrno.last }
        // The listing keeps its own descriptor of the folder, for the entries' `fstatat`.
        let reading = dup(folder)
        guard reading >= 0, let stream = fdopendir(reading) else {
            let failure = CErrno.last
            if reading >= 0 { close(reading) }
            close(folder)
            throw failure
        }
        defer { closedir(stream) }
        var entries: [DirectoryEntry] = [
            DirectoryEntry(name: ".", inode: 1, type: UInt32(DT_DIR)), DirectoryEntry(name: "..", inode: 1, type: UInt32(DT_DIR)),
        ]
        var stubs: [DirectoryEntry] = []
        let stubSuffix = PlaceholderStub.suffix.utf8.count
        while let record = readdir(stream) {
            let name = withUnsafeBytes(of: record.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            let entry = DirectoryEntry(name: name, inode: UInt64(record.pointee.d_ino), type: UInt32(record.pointee.d_type))
            if PlaceholderStub.isStubName(name) {
                stubs.append(DirectoryEntry(name: String(name.utf8.dropLast(stubSuffix))!, inode: entry.inode, type: UInt32(DT_REG), placeholder: true))
            } else if !Self.isHidden(name, inRoot: path.isEmpty) {
                entries.append(entry)
            }
        }
        if !stubs.isEmpty {
            // A stub beside its own document is left by an interrupted download: the document shows.
            let real = Set(entries.map(\.name))
            entries += stubs.filter { !real.contains($0.name) && !$0.name.isEmpty }
        }
        let listing = Listing(folder: folder, entries: entries)
        let handle = state.withLock { state in
            let handle = state.nextListing
            state.nextListing += 1
            state.listings[handle] = listing
            return handle
        }
        var answer = fuse_open_out()
        answer.fh = handle
        // The kernel keeps the listing (a change beneath makes it forget it; see coherence).
        answer.open_flags = UInt32(FOPEN_CACHE_DIR | FOPEN_KEEP_CACHE)
        channel.reply(request.header.unique, answer)
    }

    /// READDIR, and READDIRPLUS (`plus`): each entry with its attributes, so that a program
    /// stat'ing a folder's entries finds them in the kernel's cache (one request for many entries,
    /// not one an entry). An entry given with its node counts as a lookup, so only those that fit.
    func readDirectory(_ request: FUSERequest, into buffer: UnsafeMutableRawBufferPointer, plus: Bool) throws(CErrno) {
        guard let read = request.argument(fuse_read_in.self) else { throw CErrno(EINVAL) }
        guard let listing = state.withLock({ $0.listings[read.fh] }) else { throw CErrno(EBADF) }
        let folder = plus ? try path(of: request) : ""
        let limit = min(Int(read.size), buffer.count)
        let entrySize = plus ? MemoryLayout<fuse_entry_out>.size : 0
        let headerSize = entrySize + MemoryLayout<fuse_dirent>.size
        // Which entries fit, then their attributes, then their nodes in one step.
        var used = 0
        let first = Int(read.offset)
        var end = first
        while end < listing.entries.count {
            let size = (headerSize + listing.entries[end].name.utf8.count + 7) & ~7
            guard used + size <= limit else { break }
            used += size
            end += 1
        }
        var statuses: [stat?] = []
        var ids: [UInt64] = []
        if plus {
            statuses = listing.entries[first..<end].map { status(of: $0, in: listing, folder: folder) }
            ids = nodes.remember(zip(listing.entries[first..<end], statuses).compactMap { $1 == nil ? nil : $0.name }, in: request.header.nodeid)
            for (entry, status) in zip(listing.entries[first..<end], statuses) where status.map({ $0.st_mode & S_IFMT == S_IFDIR }) ?? false {
                watchBeneath(Self.child(entry.name, of: folder))
            }
        }
        used = 0
        var given = 0
        for index in first..<end {
            let entry = listing.entries[index]
            let name = entry.name.utf8
            let size = (headerSize + name.count + 7) & ~7
            if plus {
                var answer = fuse_entry_out()
                if let status = statuses[index - first] {
                    answer.nodeid = ids[given]
                    given += 1
                    answer.entry_valid = Self.cacheSeconds
                    answer.attr_valid = Self.cacheSeconds
                    answer.attr = Self.attributes(status)
                }
                buffer.storeBytes(of: answer, toByteOffset: used, as: fuse_entry_out.self)
            }
            var record = fuse_dirent()
            record.ino = entry.inode
            record.off = UInt64(index + 1)
            record.namelen = UInt32(name.count)
            record.type = entry.type
            buffer.storeBytes(of: record, toByteOffset: used + entrySize, as: fuse_dirent.self)
            let nameStart = used + headerSize
            UnsafeMutableRawBufferPointer(rebasing: buffer[nameStart..<(nameStart + name.count)]).copyBytes(from: name)
            UnsafeMutableRawBufferPointer(rebasing: buffer[(nameStart + name.count)..<(used + size)]).initializeMemory(as: UInt8.self, repeating: 0)
            used += size
        }
        channel.reply(request.header.unique, payload: UnsafeRawBufferPointer(rebasing: buffer[0..<used]))
    }

    /// The status of `entry` of `listing` as the mount shows it; nil for `.`, `..` and a name gone.
    private func status(of entry: DirectoryEntry, in listing: Listing, folder: String) -> stat? {
        guard entry.name != ".", entry.name != ".." else { return nil }
        var status = stat()
        if !entry.placeholder, fstatat(listing.folder, entry.name, &status, AT_SYMLINK_NOFOLLOW) == 0 { return status }
        return placeholder(Self.child(entry.name, of: folder))?.status
    }

    func releaseDirectory(_ request: FUSERequest) {
        if let release = request.argument(fuse_release_in.self) { state.withLock { _ = $0.listings.removeValue(forKey: release.fh) } }
        channel.reply(request.header.unique)
    }
}
