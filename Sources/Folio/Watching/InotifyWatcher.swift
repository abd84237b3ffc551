import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Watches directories with Linux inotify and hands each read's events to a callback, on a thread
/// of its own. One watch per directory; the owner decides which directories to watch.
package final class InotifyWatcher: @unchecked Sendable {
    /// One event of a watched directory: `name` is empty for the directory itself.
    package struct Event: Sendable {
        package var directory: String
        package var name: String
        package var mask: UInt32
        package var cookie: UInt32

        package var path: String { name.isEmpty ? directory : (directory == "/" ? "/" + name : directory + "/" + name) }
        private func has(_ flag: Int32) -> Bool { mask & UInt32(flag) != 0 }
        /// The first half of a rename (pair by `cookie`).
        package var isMovedFrom: Bool { has(IN_MOVED_FROM) }
        /// The second half of a rename, or an item moved in from an unwatched place.
        package var isMovedTo: Bool { has(IN_MOVED_TO) }
        package var isCreated: Bool { has(IN_CREATE) }
        package var isDeleted: Bool { has(IN_DELETE) }
        /// Contents written and closed, or attributes changed.
        package var isModified: Bool { has(IN_CLOSE_WRITE) || has(IN_ATTRIB) }
    }

    /// What a read delivered.
    package enum Batch: Sendable {
        case events([Event])
        /// The kernel's queue overflowed: events were lost; rescan what matters.
        case overflow
    }

    static let mask = UInt32(
        IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)

    private let fd: Int32
    private let wake: (read: Int32, write: Int32)
    private let lock = NSLock()
    private var directories: [Int32: String] = [:]
    private var descriptors: [String: Int32] = [:]
    private var stopped = false

    /// Starts watching nothing yet; `onBatch` runs on the watcher's thread.
    package init(onBatch: @escaping @Sendable (Batch) -> Void) throws {
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "inotify_init1: \(String(cString: strerror(errno)))"])
        }
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else {
            close(fd)
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "pipe2: \(String(cString: strerror(errno)))"])
        }
        wake = (pipeFDs[0], pipeFDs[1])
        for descriptor in pipeFDs { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let thread = Thread { [self] in run(onBatch) }
        thread.name = "folio-inotify"
        thread.start()
    }

    /// Stops the thread and closes the descriptors.
    package func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        if first { _ = Glibc.write(wake.write, "x", 1) }
    }

    /// Watches `directory`; false when it cannot be watched (missing, not a directory, limits).
    @discardableResult
    package func watch(_ directory: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if descriptors[directory] != nil { return true }
        let wd = inotify_add_watch(fd, directory, Self.mask)
        guard wd >= 0 else { return false }
        // inotify hands back the same descriptor for one inode under two names; keep the newest.
        if let old = directories[wd] { descriptors[old] = nil }
        directories[wd] = directory
        descriptors[directory] = wd
        return true
    }

    /// Stops watching `directory`.
    package func unwatch(_ directory: String) {
        lock.lock()
        defer { lock.unlock() }
        guard let wd = descriptors.removeValue(forKey: directory) else { return }
        directories[wd] = nil
        _ = inotify_rm_watch(fd, wd)
    }

    /// The directories watched now.
    package var watched: Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return Set(descriptors.keys)
    }

    /// How many directories are watched.
    package var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return descriptors.count
    }

    private func run(_ onBatch: @Sendable (Batch) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var polls = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&polls, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if polls[1].revents != 0 || ready < 0 { break }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { continue }
            let (events, overflow) = parse(buffer, count: count)
            if overflow { onBatch(.overflow) }
            if !events.isEmpty { onBatch(.events(events)) }
        }
        close(fd)
        close(wake.read)
        close(wake.write)
    }

    private func parse(_ buffer: [UInt8], count: Int) -> ([Event], Bool) {
        var events: [Event] = []
        var overflow = false
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        lock.lock()
        defer { lock.unlock() }
        buffer.withUnsafeBytes { raw in
            while offset + header <= count {
                let wd = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let cookie = raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
                let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let nameBytes = raw[(offset + header)..<min(offset + header + length, count)]
                offset += header + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    overflow = true
                    continue
                }
                if mask & UInt32(IN_IGNORED) != 0 {
                    if let directory = directories.removeValue(forKey: wd) { descriptors[directory] = nil }
                    continue
                }
                guard let directory = directories[wd] else { continue }
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                events.append(Event(directory: directory, name: name, mask: mask, cookie: cookie))
            }
        }
        return (events, overflow)
    }
}
