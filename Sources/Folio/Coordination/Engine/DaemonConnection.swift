import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A client's connection to the daemon's Unix socket: newline-delimited JSON frames, written under
/// a lock.
///
/// One thread at a time reads (it holds the reading role) and hands every frame to `onFrame`. A
/// thread waiting for a reply reads itself when no one else does (`wait(until:deadline:)`), so the
/// reply wakes the thread that wants it and no other: a hand-off between a reader thread and the
/// caller costs a second wake-up per round trip, several times the socket's own cost on a virtual
/// machine (docs/benchmarks.md). A background thread reads while no caller has waited for a moment
/// (`idleBeforeBackground`): the daemon's unsolicited messages — presenter messages, live-query
/// events, replies to async requests — reach the process without a call.
final class DaemonConnection: @unchecked Sendable {
    /// The protocol version this library speaks.
    static let protocolVersion = DaemonProtocol.version
    /// The largest frame either side accepts (docs/protocol.md).
    static let maximumFrameSize = 1 << 20

    struct Error: Swift.Error, CustomStringConvertible {
        var message: String
        /// The daemon did not answer in time (the connection may still be used).
        var timedOut = false
        var description: String { message }
    }

    private let fd: Int32
    private let writeLock = NSLock()
    /// Bytes read and not yet framed; only the thread holding the reading role touches them.
    private var buffered: [UInt8] = []
    /// Where each read lands (kept: a fresh 64 KiB array per read cost a clear and an allocation).
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)

    /// Guards the reading role, the waiters' count and the end of the stream; broadcast after each
    /// batch of frames when someone waits.
    private let condition = NSCondition()
    private var reading = false
    private var waiters = 0
    private var lastWaiter = ContinuousClock.now
    private var waitingSince = ContinuousClock.now
    private var backgroundSleeping = false
    private var endReason: String?
    private var onFrame: (@Sendable (WireValue) -> Void)?
    private var onClose: (@Sendable (String) -> Void)?
    /// How long the background thread leaves reading to callers after the last one waited.
    static let idleBeforeBackground: Duration = .microseconds(500)

    /// How long each step may take before a daemon that does not answer is given up on.
    struct Deadlines: Sendable {
        /// Connecting and the hello exchange.
        var connect: Duration
        /// Each request's reply, and each frame's write.
        var request: Duration

        /// 10 s to connect and say hello, 60 s for a request; `FOLIO_CONNECT_TIMEOUT` and
        /// `FOLIO_REQUEST_TIMEOUT` (seconds) change them.
        static var fromEnvironment: Deadlines {
            func seconds(_ name: String, _ fallback: Duration) -> Duration {
                guard let text = ProcessInfo.processInfo.environment[name], let value = Double(text), value > 0, value.isFinite else {
                    return fallback
                }
                return .milliseconds(Int64(value * 1000))
            }
            return Deadlines(connect: seconds("FOLIO_CONNECT_TIMEOUT", .seconds(10)), request: seconds("FOLIO_REQUEST_TIMEOUT", .seconds(60)))
        }
    }

    /// Connects to the socket at `socketPath`. Connecting and every write give up after the
    /// deadlines (a daemon that stopped reading cannot hold this process forever).
    init(socketPath: String, deadlines: Deadlines) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Error(message: "socket: \(String(cString: strerror(errno)))") }
        // A Unix socket's connect waits for the listener's backlog under the send timeout.
        Self.setTimeout(fd, SO_SNDTIMEO, deadlines.connect)
        guard let result = UnixSocketAddress.with(socketPath, { connect(fd, $0, $1) }) else {
            close(fd)
            throw Error(message: "socket path too long: \(socketPath)")
        }
        guard result == 0 else {
            let reason = errno == EAGAIN ? "the daemon did not accept the connection within \(deadlines.connect)" : String(cString: strerror(errno))
            close(fd)
            throw Error(message: "cannot connect to \(socketPath): \(reason)")
        }
        self.fd = fd
        self.deadlines = deadlines
        Self.setTimeout(fd, SO_SNDTIMEO, deadlines.request)
    }

    let deadlines: Deadlines

    private static func setTimeout(_ fd: Int32, _ option: Int32, _ duration: Duration?) {
        var value = timeval()
        if let duration {
            let (seconds, attoseconds) = duration.components
            value.tv_sec = Int(seconds)
            value.tv_usec = Int(attoseconds / 1_000_000_000_000)
        }
        _ = setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Ends the connection both ways; the reader thread sees the end and stops.
    func shutdownBothWays() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Writes one frame (the value and a newline).
    func send(_ frame: WireValue) throws(Error) {
        var bytes = frame.serialized()
        bytes.append(UInt8(ascii: "\n"))
        writeLock.lock()
        defer { writeLock.unlock() }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    // Part of a frame may be out: the stream cannot be used again.
                    shutdownBothWays()
                    throw Error(message: "the daemon took no data for \(deadlines.request): it does not answer")
                }
                throw Error(message: String(cString: strerror(errno)))
            }
            offset += written
        }
    }

    /// Sends `frame` and reads the first reply synchronously, before the reader thread starts,
    /// within the connect deadline.
    func handshake(_ frame: WireValue) throws -> WireValue {
        Self.setTimeout(fd, SO_RCVTIMEO, deadlines.connect)
        // Afterwards a blocking read gives up after the request deadline, so that a caller with the
        // standard deadline reads without a `poll` first.
        defer { Self.setTimeout(fd, SO_RCVTIMEO, deadlines.request) }
        try send(frame)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                return try WireValue(parsing: line)
            }
            let more: Bool
            do { more = try fill() } catch {
                throw error.timedOut ? Error(message: "the daemon did not answer hello within \(deadlines.connect)") : error
            }
            guard more else { throw Error(message: "the daemon closed the connection during hello") }
        }
    }

    /// What one read brought.
    private enum ReadOutcome {
        case frames
        case timedOut
        case ended(String)
    }

    /// Reads once (waiting at most until `deadline`, if any) and hands every whole frame to
    /// `onFrame`. Only the thread holding the reading role calls it.
    private func readAndDispatch(deadline: ContinuousClock.Instant?) -> ReadOutcome {
        if let deadline {
            let remaining = deadline - .now
            // The socket's own timeout is the standard deadline (a read gives up after it): wait
            // with `poll` first only for a deadline clearly shorter.
            if remaining + .milliseconds(100) < deadlines.request {
                guard remaining > .zero else { return .timedOut }
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(min((remaining / .milliseconds(1)).rounded(.up), Double(Int32.max)))
                let ready = poll(&descriptor, 1, milliseconds)
                if ready == 0 { return .timedOut }
            }
        }
        do {
            guard try fill() else { return .ended("the daemon closed the connection") }
        } catch {
            return error.timedOut ? .timedOut : .ended(error.message)
        }
        while let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
            let line = buffered[..<newline]
            defer { buffered.removeSubrange(...newline) }
            if line.isEmpty { continue }
            do {
                onFrame?(try WireValue(parsing: line))
            } catch {
                return .ended("the daemon sent a frame that is not JSON: \(error)")
            }
        }
        return .frames
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private func fill() throws(Error) -> Bool {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw Error(message: "the daemon did not answer within \(deadlines.request)", timedOut: true)
                }
                throw Error(message: String(cString: strerror(errno)))
            }
            if count == 0 { return false }
            buffered.append(contentsOf: chunk[..<count])
            if buffered.count > Self.maximumFrameSize, !buffered.contains(UInt8(ascii: "\n")) {
                throw Error(message: "the daemon sent a frame larger than \(Self.maximumFrameSize) bytes")
            }
            return true
        }
    }

    /// Ends reading for good: `onClose` runs once, then every waiter wakes.
    private func ended(_ reason: String) {
        condition.lock()
        let first = endReason == nil
        let handler = onClose
        condition.unlock()
        guard first else { return }
        handler?(reason)
        condition.lock()
        endReason = reason
        reading = false
        condition.broadcast()
        condition.unlock()
    }

    /// Frames go to `onFrame`, on whichever thread reads; the end of the connection (or a frame
    /// that is not JSON) to `onClose`, once. Starts the background reader.
    func startReading(onFrame: @escaping @Sendable (WireValue) -> Void, onClose: @escaping @Sendable (String) -> Void) {
        condition.lock()
        self.onFrame = onFrame
        self.onClose = onClose
        condition.unlock()
        let thread = Thread { [self] in readInBackground() }
        thread.name = "folio-daemon-reader"
        thread.start()
    }

    /// The background reader: reads whenever no caller has waited for `idleBeforeBackground`, and
    /// leaves the socket to callers otherwise. It sleeps in short timed waits while callers come and
    /// go (so that none has to wake it), and untimed through a long wait (the caller wakes it when
    /// it leaves).
    private func readInBackground() {
        while true {
            condition.lock()
            while endReason == nil, waiters > 0 || ContinuousClock.now - lastWaiter < Self.idleBeforeBackground {
                if waiters > 0, ContinuousClock.now - waitingSince > .milliseconds(10) {
                    backgroundSleeping = true
                    condition.wait()
                    backgroundSleeping = false
                } else {
                    _ = condition.wait(until: Date(timeIntervalSinceNow: Self.idleBeforeBackground.seconds))
                }
            }
            if endReason != nil {
                condition.unlock()
                return
            }
            reading = true
            condition.unlock()
            let outcome = readAndDispatch(deadline: nil)
            condition.lock()
            reading = false
            if waiters > 0 { condition.broadcast() }
            condition.unlock()
            if case .ended(let reason) = outcome {
                ended(reason)
                return
            }
        }
    }

    /// How a wait ended.
    enum WaitOutcome {
        case done
        case timedOut
        /// The connection ended (its `onClose` has run).
        case ended
    }

    /// Blocks until `done()` holds (checked after each batch of frames), reading the socket itself
    /// while no other thread does; gives up at `deadline`. `done` must not block.
    func wait(until done: () -> Bool, deadline: ContinuousClock.Instant?) -> WaitOutcome {
        condition.lock()
        if waiters == 0 { waitingSince = .now }
        waiters += 1
        defer {
            waiters -= 1
            lastWaiter = .now
            if waiters == 0, backgroundSleeping { condition.broadcast() }
            condition.unlock()
        }
        while !done() {
            if endReason != nil { return .ended }
            if let deadline, deadline <= .now { return .timedOut }
            if !reading {
                reading = true
                condition.unlock()
                let outcome = readAndDispatch(deadline: deadline)
                if case .ended(let reason) = outcome { ended(reason) }
                condition.lock()
                if endReason == nil { reading = false }
                // Another waiter may have its reply now, or may take the role.
                if waiters > 1 { condition.broadcast() }
                continue
            }
            if let deadline {
                _ = condition.wait(until: Date(timeIntervalSinceNow: (deadline - .now).seconds))
            } else {
                condition.wait()
            }
        }
        return .done
    }
}
