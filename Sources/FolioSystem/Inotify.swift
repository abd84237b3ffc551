#if os(Linux)
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
public import SystemPackage

/// A Linux inotify instance: a descriptor on which the kernel queues an event for each change to
/// the paths it watches. A thin wrapper (no threads, no state); `InotifyWatcher` builds directory
/// watching on it.
public struct Inotify: Sendable {
    /// A watch, as the kernel numbers it within one instance.
    public struct Watch: RawRepresentable, Hashable, Sendable {
        /// The watch descriptor.
        public var rawValue: Int32

        /// Creates a watch from its descriptor.
        public init(rawValue: Int32) { self.rawValue = rawValue }
    }

    /// What a watch asks for, and what an event says happened.
    public struct EventMask: OptionSet, Hashable, Sendable {
        /// The C bits.
        public var rawValue: UInt32

        /// Creates a mask from its C bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// A file opened for writing was closed (`IN_CLOSE_WRITE`).
        public static let closeWrite = Self(rawValue: UInt32(IN_CLOSE_WRITE))
        /// Metadata changed: permissions, times, extended attributes, links (`IN_ATTRIB`).
        public static let attributes = Self(rawValue: UInt32(IN_ATTRIB))
        /// An item was created in the watched directory (`IN_CREATE`).
        public static let create = Self(rawValue: UInt32(IN_CREATE))
        /// An item was deleted from the watched directory (`IN_DELETE`).
        public static let delete = Self(rawValue: UInt32(IN_DELETE))
        /// An item was renamed away from the watched directory: a rename's first half (`IN_MOVED_FROM`).
        public static let movedFrom = Self(rawValue: UInt32(IN_MOVED_FROM))
        /// An item was renamed into the watched directory: a rename's second half (`IN_MOVED_TO`).
        public static let movedTo = Self(rawValue: UInt32(IN_MOVED_TO))
        /// Watch the path only if it is a directory (`IN_ONLYDIR`; a request flag).
        public static let onlyDirectory = Self(rawValue: UInt32(IN_ONLYDIR))
        /// No events for children after they were unlinked (`IN_EXCL_UNLINK`; a request flag).
        public static let excludeUnlinked = Self(rawValue: UInt32(IN_EXCL_UNLINK))
        /// The event's subject is a directory (`IN_ISDIR`; set by the kernel).
        public static let isDirectory = Self(rawValue: UInt32(IN_ISDIR))
        /// The queue overflowed and events were lost (`IN_Q_OVERFLOW`; set by the kernel, on watch -1).
        public static let queueOverflow = Self(rawValue: UInt32(IN_Q_OVERFLOW))
        /// The watch was removed: explicitly, or because its directory went (`IN_IGNORED`).
        public static let ignored = Self(rawValue: UInt32(IN_IGNORED))
    }

    /// One event as the kernel queued it (`struct inotify_event`).
    public struct Event: Hashable, Sendable {
        /// The watch it came from (-1 for a queue overflow).
        public var watch: Watch
        /// What happened.
        public var mask: EventMask
        /// The number shared by the two halves of one rename (0 otherwise).
        public var cookie: UInt32
        /// The name of the item in the watched directory; empty when the event is about the
        /// directory itself. Bytes that are not UTF-8 are replaced.
        public var name: String

        /// Creates an event.
        public init(watch: Watch, mask: EventMask, cookie: UInt32 = 0, name: String = "") {
            self.watch = watch
            self.mask = mask
            self.cookie = cookie
            self.name = name
        }
    }

    /// The instance's descriptor: close-on-exec and non-blocking.
    public let descriptor: FileDescriptor

    /// Creates an instance.
    ///
    /// - Throws: `Errno`: `.tooManyOpenFiles` when the user's instance limit
    ///   (`fs.inotify.max_user_instances`) or the process's descriptor limit is reached.
    ///
    /// The corresponding C function is `inotify_init1(IN_CLOEXEC | IN_NONBLOCK)`.
    public init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try valueOrErrno { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) })
    }

    /// Watches `path` for `mask`, or changes the mask of its existing watch (one inode has one watch
    /// per instance, whatever name it is reached by).
    ///
    /// - Throws: `Errno`: `.noSuchFileOrDirectory`, `.notDirectory` (with `.onlyDirectory`),
    ///   `.permissionDenied`, `.noSpace` when the user's watch limit (`fs.inotify.max_user_watches`)
    ///   is reached.
    ///
    /// The corresponding C function is `inotify_add_watch`.
    public func addWatch(_ path: String, for mask: EventMask) throws(Errno) -> Watch {
        Watch(rawValue: try valueOrErrno { inotify_add_watch(descriptor.rawValue, PathRedirect.physical(path), mask.rawValue) })
    }

    /// Removes a watch; the kernel then queues an `.ignored` event for it.
    ///
    /// The corresponding C function is `inotify_rm_watch`.
    public func removeWatch(_ watch: Watch) throws(Errno) {
        _ = try valueOrErrno { inotify_rm_watch(descriptor.rawValue, watch.rawValue) }
    }

    /// Reads the queued events that fit in `buffer` (64 KiB holds at least 240 of the longest),
    /// without waiting: none when the queue is empty.
    ///
    /// The corresponding C function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> [Event] {
        let count: Int
        do {
            count = try valueOrErrno { systemRead(descriptor.rawValue, buffer.baseAddress, buffer.count) }
        } catch .resourceTemporarilyUnavailable {
            return []
        }
        return Self.events(in: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }

    /// Decodes the `struct inotify_event` records in `bytes`, as `read` returned them; a record cut
    /// short at the end is left out.
    public static func events(in bytes: UnsafeRawBufferPointer) -> [Event] {
        var events: [Event] = []
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        while offset + header <= bytes.count {
            let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            guard offset + header + length <= bytes.count else { break }
            let name = bytes[(offset + header)..<(offset + header + length)].prefix { $0 != 0 }
            events.append(
                Event(watch: Watch(rawValue: watch), mask: EventMask(rawValue: mask), cookie: cookie, name: String(decoding: name, as: UTF8.self)))
            offset += header + length
        }
        return events
    }

    /// Closes the instance; its watches go with it.
    ///
    /// The corresponding C function is `close`.
    public func close() throws(Errno) {
        // Linux frees the descriptor even when close fails with EINTR: never retry.
        _ = try valueOrErrno(retryOnInterrupt: false) { systemClose(descriptor.rawValue) }
    }
}

// libc's calls, out of reach of the methods named after them.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
#endif
