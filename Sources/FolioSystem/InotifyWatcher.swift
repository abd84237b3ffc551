#if os(Linux)
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
public import Foundation
public import Logging
import Synchronization
public import SystemPackage

/// Watches directories with Linux inotify, one watch per directory (the owner decides which), and
/// delivers what happened in them in batches: one batch per read of the kernel's queue, with the
/// halves of each rename paired into one move (`InotifyMovePairing`).
///
/// A dedicated thread waits on the kernel's queue and reads it; nothing blocks Swift's cooperative
/// pool. The batches go to `events`, an asynchronous sequence, or — for callers that cannot await,
/// such as the coordination arbiter, which works under its lock — to a handler run on that thread.
///
/// Errors are logged: a directory that cannot be watched (missing, not a directory, no permission,
/// the user's watch limit) and a failed read, after which the watcher stops. A lost-events report
/// from the kernel is delivered as `.overflow`: rescan what matters.
///
/// `stop()` ends the watcher; ending the iteration of `events` does too. The thread keeps the
/// watcher alive until then.
public final class InotifyWatcher: Sendable {
    /// A change in a watched directory. Paths are the watched directory's path and the item's name.
    public enum Event: Hashable, Sendable {
        /// An item was created (`IN_CREATE`).
        case created(String)
        /// A file's contents were written and closed, or an item's metadata changed
        /// (`IN_CLOSE_WRITE`, `IN_ATTRIB`).
        case modified(String)
        /// An item was deleted (`IN_DELETE`).
        case deleted(String)
        /// An item was renamed from one watched directory (or name) to another (`IN_MOVED_FROM`
        /// and `IN_MOVED_TO` paired by cookie). A rename over an existing item is one too.
        case moved(from: String, to: String)
        /// An item arrived from outside the watched directories (`IN_MOVED_TO` alone).
        case movedIn(String)
        /// An item left for a place outside the watched directories (`IN_MOVED_FROM` whose other
        /// half did not come within the pairing window).
        case movedOut(String)
        /// The kernel's queue overflowed and events were lost (`IN_Q_OVERFLOW`).
        case overflow
    }

    /// What a watch asks the kernel for.
    static let mask: Inotify.EventMask = [
        .closeWrite, .attributes, .create, .delete, .movedFrom, .movedTo, .onlyDirectory, .excludeUnlinked,
    ]

    /// How many batches wait for the consumer of `events` before the thread stops reading.
    public static let bufferedBatches = 4

    private struct Watches {
        var directories: [Inotify.Watch: String] = [:]
        var watches: [String: Inotify.Watch] = [:]
        /// `stop()` was called or the thread ended: the wake pipe is written no more.
        var isStopping = false
        /// The thread ended and closed the descriptors.
        var isClosed = false
    }

    private enum Delivery: Sendable {
        case handler(@Sendable ([Event]) -> Void)
        case sequence(AsyncStream<[Event]>.Continuation, InotifyEventSequence.Credit)
    }

    /// The batches, for a watcher made without a handler; a watcher made with one has none (the
    /// sequence ends at once). One consumer: iterate it once.
    public let events: InotifyEventSequence

    private let inotify: Inotify
    private let wake: (read: Int32, write: Int32)
    private let delivery: Delivery
    private let pairingWindow: Duration
    private let logger: Logger
    private let state = Mutex(Watches())

    /// Creates a watcher, watching nothing yet, whose batches are read from `events`.
    ///
    /// Back-pressure: up to `bufferedBatches` batches wait for the consumer; then the thread reads
    /// no more, events wait in the kernel's queue (`fs.inotify.max_queued_events`, 16384 by
    /// default), and when that fills the kernel drops them and the sequence reports `.overflow`.
    ///
    /// - Parameters:
    ///   - pairingWindow: how long the first half of a rename waits for its second before it is
    ///     delivered as `.movedOut` (events after it wait too).
    ///   - logger: where the watcher's errors go.
    /// - Throws: `Errno` when no inotify instance can be made (`.tooManyOpenFiles`: the user's
    ///   limit, `fs.inotify.max_user_instances`).
    public convenience init(pairingWindow: Duration = .milliseconds(50), logger: Logger) throws(Errno) {
        let (stream, continuation) = AsyncStream<[Event]>.makeStream()
        let credit = InotifyEventSequence.Credit(limit: Self.bufferedBatches)
        try self.init(
            events: InotifyEventSequence(stream: stream, credit: credit), delivery: .sequence(continuation, credit),
            pairingWindow: pairingWindow, logger: logger)
        continuation.onTermination = { [weak self] _ in self?.stop() }
    }

    /// Creates a watcher, watching nothing yet, that hands each batch to `handler` on its thread;
    /// the next read waits until the handler returns.
    ///
    /// - Parameters:
    ///   - pairingWindow: how long the first half of a rename waits for its second before it is
    ///     delivered as `.movedOut` (events after it wait too).
    ///   - logger: where the watcher's errors go.
    ///   - handler: takes each batch, on the watcher's thread.
    /// - Throws: `Errno` when no inotify instance can be made.
    public convenience init(
        pairingWindow: Duration = .milliseconds(50), logger: Logger, handler: @escaping @Sendable ([Event]) -> Void
    ) throws(Errno) {
        try self.init(
            events: InotifyEventSequence(stream: AsyncStream { $0.finish() }, credit: nil), delivery: .handler(handler),
            pairingWindow: pairingWindow, logger: logger)
    }

    private init(events: InotifyEventSequence, delivery: Delivery, pairingWindow: Duration, logger: Logger) throws(Errno) {
        inotify = try Inotify()
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            let error = Errno(rawValue: errno)
            try? inotify.close()
            throw error
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wake = (ends[0], ends[1])
        self.events = events
        self.delivery = delivery
        self.pairingWindow = pairingWindow
        self.logger = logger
        let thread = Thread { [self] in run() }
        thread.name = "folio-inotify"
        thread.start()
    }

    /// Hands each batch of `events` to `handle` on `queue` (an owner's serial queue), taking the
    /// next batch only once `handle` has returned there, so the sequence's back-pressure reaches
    /// the kernel's queue. Ends when the sequence ends or `handle` returns false (its owner has
    /// gone). Iterates `events`: use one or the other.
    public func deliver(on queue: DispatchQueue, _ handle: @escaping @Sendable ([Event]) -> Bool) {
        let events = events
        Task {
            for await batch in events {
                let goOn = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                    queue.async { done.resume(returning: handle(batch)) }
                }
                guard goOn else { return }
            }
        }
    }

    /// Stops the thread, closes the descriptors and ends `events` (after the batches it holds).
    public func stop() {
        state.withLock { state in
            guard !state.isStopping else { return }
            state.isStopping = true
            _ = write(wake.write, "x", 1)
        }
        if case .sequence(_, let credit) = delivery { credit.close() }
    }

    /// Watches `directory` (not what is below it). Failures are logged.
    ///
    /// - Returns: false when it cannot be watched: missing, not a directory, no permission, the
    ///   user's watch limit (`fs.inotify.max_user_watches`), or the watcher stopped.
    @discardableResult
    public func watch(_ directory: String) -> Bool {
        let outcome = state.withLock { state -> Result<Void, Errno> in
            if state.watches[directory] != nil { return .success(()) }
            guard !state.isClosed else { return .failure(.badFileDescriptor) }
            do throws(Errno) {
                let watch = try inotify.addWatch(directory, for: Self.mask)
                // The kernel hands back the same watch for one inode under two names: keep the newest.
                if let old = state.directories[watch] { state.watches[old] = nil }
                state.directories[watch] = directory
                state.watches[directory] = watch
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        guard case .failure(let error) = outcome else { return true }
        switch error {
        case .noSpace, .noMemory:
            logger.warning(
                "folder not watched: the inotify watch limit is reached (raise fs.inotify.max_user_watches)",
                metadata: ["path": "\(directory)", "error": "\(error)"])
        case .badFileDescriptor:
            logger.debug("folder not watched: the watcher stopped", metadata: ["path": "\(directory)"])
        default:
            logger.notice("folder not watched", metadata: ["path": "\(directory)", "error": "\(error)"])
        }
        return false
    }

    /// Stops watching `directory`.
    public func unwatch(_ directory: String) {
        state.withLock { state in
            guard !state.isClosed, let watch = state.watches.removeValue(forKey: directory) else { return }
            state.directories[watch] = nil
            try? inotify.removeWatch(watch)
        }
    }

    /// The directories watched now.
    public var watchedDirectories: Set<String> {
        state.withLock { Set($0.watches.keys) }
    }

    /// How many directories are watched now.
    public var watchCount: Int {
        state.withLock { $0.watches.count }
    }

    // MARK: The thread

    private func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        var pairing = InotifyMovePairing(window: pairingWindow)
        var polls = [
            pollfd(fd: inotify.descriptor.rawValue, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            // Sleeps until the kernel has events, stop() is called, or a first half's wait is over.
            let timeout = pairing.deadline.map { Int32(max(0, (($0 - .now) / .milliseconds(1)).rounded(.up))) } ?? -1
            if poll(&polls, 2, timeout) < 0 {
                guard errno == EINTR else {
                    logger.error("inotify poll failed; the watcher stops", metadata: ["error": "\(Errno(rawValue: errno))"])
                    break
                }
                continue
            }
            if polls[1].revents != 0 { break }
            let now = ContinuousClock.now
            var batch: [Event] = []
            if polls[0].revents != 0 {
                let read: [Inotify.Event]
                do {
                    read = try inotify.read(into: buffer)
                } catch {
                    logger.error("inotify read failed; the watcher stops", metadata: ["error": "\(error)"])
                    break
                }
                let directories = state.withLock { $0.directories }
                batch = pairing.add(read, at: now) { directories[$0] }
                forgetRemovedWatches(read)
            }
            batch += pairing.expire(at: now)
            if !batch.isEmpty, !deliver(batch) { break }
        }
        state.withLock { state in
            state.isStopping = true
            state.isClosed = true
            try? inotify.close()
            close(wake.read)
            close(wake.write)
        }
        if case .sequence(let continuation, let credit) = delivery {
            credit.close()
            continuation.finish()
        }
    }

    /// Forgets the watches the kernel removed (their directory went).
    private func forgetRemovedWatches(_ events: [Inotify.Event]) {
        guard events.contains(where: { $0.mask.contains(.ignored) }) else { return }
        state.withLock { state in
            for event in events where event.mask.contains(.ignored) {
                guard let directory = state.directories.removeValue(forKey: event.watch) else { continue }
                if state.watches[directory] == event.watch { state.watches[directory] = nil }
            }
        }
    }

    /// Hands a batch over; false when nobody takes batches any more.
    private func deliver(_ batch: [Event]) -> Bool {
        switch delivery {
        case .handler(let handler):
            handler(batch)
            return true
        case .sequence(let continuation, let credit):
            guard case .enqueued = continuation.yield(batch) else { return false }
            return credit.sent()
        }
    }
}
#endif
