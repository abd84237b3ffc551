#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Folio
import FolioSystem
public import Foundation
import Logging
import SystemPackage

/// An out-of-process provider: an executable in any language speaking the provider protocol
/// (docs/provider-protocol.md) on its standard input and output. It is started on the first request,
/// started again on the next request after it exits or crashes, and stopped with ``stop()``.
///
/// A missing executable gives ``FileProviderError/Code/applicationExtensionNotFound``; a provider
/// that exits, crashes or stops answering fails the requests in flight with
/// ``FileProviderError/Code/providerDomainTemporarilyUnavailable``, naming the domain and executable.
public final class ProviderProcess: FileProvider, @unchecked Sendable {
    /// The provider's executable.
    public let executable: URL
    /// Its arguments.
    public let arguments: [String]
    /// The domain it serves (named in errors and logs).
    public let domain: FileProviderDomain
    /// Where it writes fetched contents: every returned path must be inside.
    public let temporaryDirectory: URL
    /// How long a call without content may take.
    public var requestTimeout: Duration = .seconds(60)
    /// How long a call with content (fetch, create, modify) may take.
    public var transferTimeout: Duration = .seconds(3600)

    private let environment: [String: String]?
    private let lock = NSLock()
    private var running: Connection?
    private var nextIdentifier: Int64 = 0
    private let logger: Logger

    /// One launch of the executable.
    final class Connection: @unchecked Sendable {
        let process: Process
        let input: FileHandle
        var pending: [Int64: Pending] = [:]
        var ended = false
        /// Frames are written here, in order: a provider that stops reading blocks this queue, never
        /// a caller's thread, and the request's deadline (armed before the write) ends it.
        let writer = DispatchQueue(label: "folio.provider.writer")

        init(process: Process, input: FileHandle) {
            self.process = process
            self.input = input
        }
    }

    /// A request waiting for its reply.
    struct Pending {
        var method: String
        var continuation: CheckedContinuation<WireValue, any Error>
        var progress: Progress?
        var cancelled = false
    }

    /// A provider run from `executable` with `arguments`, serving `domain`.
    public init(
        executable: URL, arguments: [String] = [], domain: FileProviderDomain, temporaryDirectory: URL, environment: [String: String]? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.domain = domain
        self.temporaryDirectory = temporaryDirectory
        self.environment = environment
        var logger = Logger(label: "folio.provider.process")
        logger[metadataKey: "domain"] = "\(domain.identifier)"
        self.logger = logger
    }

    deinit { stop() }

    /// Whether the executable is running now.
    public var isRunning: Bool { lock.withLock { running.map { !$0.ended } ?? false } }

    /// The process id of the running executable, if any.
    public var processIdentifier: Int32? { lock.withLock { running.flatMap { $0.ended ? nil : $0.process.processIdentifier } } }

    /// Ends the executable: its input is closed, and it is killed if it has not exited within a second.
    public func stop() {
        guard let connection = lock.withLock({ () -> Connection? in
            defer { running = nil }
            return running
        }) else { return }
        // After the frames already queued (the writer queue owns the input).
        connection.writer.async { try? connection.input.close() }
        let process = connection.process
        Self.timers.asyncAfter(deadline: .now() + 1) { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    }

    // MARK: Launching

    private var name: String { "provider “\(domain.displayName)” (\(domain.identifier), \(executable.path))" }

    /// The running connection, launching the executable if there is none.
    private func connection() throws -> Connection {
        try lock.withLock {
            if let running, !running.ended { return running }
            guard access(executable.path, X_OK) == 0 else {
                throw FileProviderError(.applicationExtensionNotFound, message: "the \(name) is missing or not executable: \(Errno(rawValue: errno))")
            }
            try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
            // A provider that dies leaves a pipe with no reader: writing to it must fail with EPIPE,
            // not end this process with SIGPIPE (a pipe has no MSG_NOSIGNAL). As NIO does.
            signal(SIGPIPE, SIG_IGN)
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            if let environment { process.environment = environment }
            let input = Pipe(), output = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            do {
                try process.run()
            } catch {
                throw FileProviderError(.applicationExtensionNotFound, message: "the \(name) could not be started: \(error.localizedDescription)")
            }
            let connection = Connection(process: process, input: input.fileHandleForWriting)
            running = connection
            logger.info("provider started", metadata: ["pid": "\(process.processIdentifier)", "executable": "\(executable.path)"])
            let replies = output.fileHandleForReading.fileDescriptor
            Thread { [self] in readReplies(replies, connection) }.start()
            let messages = errors.fileHandleForReading.fileDescriptor
            Thread { [self] in readMessages(messages) }.start()
            // The hello goes first; the provider answers it before it reads anything else.
            nextIdentifier += 1
            let hello: WireValue = [
                "id": .int(nextIdentifier), "method": "hello",
                "params": [
                    "protocol": .int(ProviderWire.protocolVersion), "temporaryDirectory": .string(temporaryDirectory.path),
                    "domain": ["identifier": .string(domain.identifier.rawValue), "displayName": .string(domain.displayName)],
                ],
            ]
            write(hello, to: connection)
            return connection
        }
    }

    /// Queues a frame for the provider (on the connection's writer queue).
    private func write(_ frame: WireValue, to connection: Connection) {
        let bytes = frame.serialized() + [UInt8(ascii: "\n")]
        connection.writer.async { try? connection.input.write(contentsOf: bytes) }
    }

    /// Deadlines and the kill after `stop()` fire here, never on a global queue.
    private static let timers = DispatchQueue(label: "folio.provider.timers")

    /// Reads the provider's replies and progress until its output ends, then fails what is pending.
    private func readReplies(_ descriptor: Int32, _ connection: Connection) {
        var reader = FrameLineReader(descriptor: descriptor, limit: ProviderWire.maximumLine)
        var reason = "closed its output"
        reading: while true {
            let line: ArraySlice<UInt8>
            do {
                guard let next = try reader.next() else { break }
                line = next
            } catch {
                reason = "sent a line over \(ProviderWire.maximumLine) bytes"
                kill(connection.process.processIdentifier, SIGKILL)
                break
            }
            if line.isEmpty { continue }
            guard let frame = try? WireValue(parsing: line) else {
                // A provider that breaks the framing cannot be trusted with what follows.
                reason = "sent a line that is not JSON"
                kill(connection.process.processIdentifier, SIGKILL)
                break reading
            }
            if frame["method"]?.stringValue == "progress", let params = frame["params"], let id = params["id"]?.intValue {
                let progress = lock.withLock { connection.pending[id]?.progress }
                if let total = params["total"]?.intValue, total >= 0 { progress?.totalUnitCount = total }
                if let completed = params["completed"]?.intValue, completed >= 0 { progress?.completedUnitCount = completed }
                continue
            }
            guard let id = frame["id"]?.intValue else { continue }
            guard let pending = lock.withLock({ connection.pending.removeValue(forKey: id) }) else { continue }
            if let error = frame["error"], error != .null {
                pending.continuation.resume(throwing: ProviderWire.error(error, context: "\(name), \(pending.method)"))
            } else if let result = frame["result"], result.objectValue != nil {
                pending.continuation.resume(returning: result)
            } else {
                pending.continuation.resume(throwing: malformed(pending.method, "a reply with neither result nor error"))
            }
        }
        close(descriptor)
        // Its output ended, so it is exiting: give it two seconds (never wait forever on a child).
        for _ in 0..<200 where connection.process.isRunning { usleep(10_000) }
        let status =
            connection.process.isRunning
            ? "stopped answering" : connection.process.terminationReason == .uncaughtSignal
                ? "was killed by signal \(connection.process.terminationStatus)" : "exited with status \(connection.process.terminationStatus)"
        let orphans = lock.withLock { () -> [Pending] in
            connection.ended = true
            if running === connection { running = nil }
            defer { connection.pending = [:] }
            return Array(connection.pending.values)
        }
        if !orphans.isEmpty || connection.process.terminationStatus != 0 {
            logger.warning("provider ended", metadata: ["reason": "\(reason)", "status": "\(status)", "pending": "\(orphans.count)"])
        }
        for pending in orphans {
            pending.continuation.resume(
                throwing: FileProviderError(
                    .providerDomainTemporarilyUnavailable,
                    message: "the \(name) \(reason) and \(status) during \(pending.method); it is started again on the next request"))
        }
    }

    /// Passes the provider's standard error to the log, a line at a time.
    private func readMessages(_ descriptor: Int32) {
        var reader = FrameLineReader(descriptor: descriptor, limit: 64 << 10)
        while let line = try? reader.next() {
            logger.info("provider: \(String(decoding: line.prefix(4096), as: UTF8.self))")
        }
        close(descriptor)
    }

    private func malformed(_ method: String, _ reason: String) -> FileProviderError {
        FileProviderError(.cannotSynchronize, message: "the \(name) sent a malformed reply to \(method): \(reason)")
    }

    // MARK: Requests

    /// Sends `method` and waits for its result; cancelling the task sends `cancel`.
    func call(_ method: String, _ params: WireValue, progress: Progress? = nil, timeout: Duration? = nil) async throws -> WireValue {
        try Task.checkCancellation()
        let connection = try connection()
        let id = lock.withLock { () -> Int64 in
            nextIdentifier += 1
            return nextIdentifier
        }
        let limit = timeout ?? requestTimeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let registered = lock.withLock { () -> Bool in
                    guard !connection.ended else { return false }
                    connection.pending[id] = Pending(method: method, continuation: continuation, progress: progress)
                    return true
                }
                guard registered else {
                    continuation.resume(throwing: FileProviderError(.providerDomainTemporarilyUnavailable, message: "the \(name) ended before \(method)"))
                    return
                }
                // The deadline first: a write that blocks (a provider that stops reading) is under it.
                let (seconds, attoseconds) = limit.components
                Self.timers.asyncAfter(deadline: .now() + Double(seconds) + Double(attoseconds) / 1e18) { [weak self] in
                    self?.timeOut(id, connection, after: limit)
                }
                write(["id": .int(id), "method": .string(method), "params": params], to: connection)
            }
        } onCancel: {
            let known = lock.withLock { () -> Bool in
                connection.pending[id]?.cancelled = true
                return connection.pending[id] != nil
            }
            progress?.cancel()
            if known { write(["method": "cancel", "params": ["id": .int(id)]], to: connection) }
        }
    }

    /// Fails request `id` if it is still waiting, and ends the provider: one that does not answer is hung.
    private func timeOut(_ id: Int64, _ connection: Connection, after limit: Duration) {
        guard let pending = lock.withLock({ connection.pending.removeValue(forKey: id) }) else { return }
        logger.warning("provider did not answer", metadata: ["method": "\(pending.method)", "limit": "\(limit)"])
        pending.continuation.resume(
            throwing: FileProviderError(
                .providerDomainTemporarilyUnavailable, message: "the \(name) did not answer \(pending.method) within \(limit); it was stopped"))
        kill(connection.process.processIdentifier, SIGKILL)
    }
}
