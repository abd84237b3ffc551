import Foundation
import Synchronization
package import Logging
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Coordination through the per-user daemon: one long-lived connection per process, on which
/// requests, replies and the daemon's presenter messages are multiplexed (docs/protocol.md). A
/// reader thread takes replies and messages off the socket; requests are written under a lock.
package final class DaemonCoordinationEngine: CoordinationEngine, @unchecked Sendable {
    private let socketPath: String
    /// The app this connection declared, if any.
    package let app: String?
    private let stateLock = NSLock()
    private var connection: DaemonConnection
    private var requests: [UInt64: @Sendable (Result<WireValue, CoordinationFailure>) -> Void] = [:]
    private var lost: CoordinationFailure?
    private var closedOnPurpose = false
    private var lastReconnectAttempt = ContinuousClock.now
    private var eventHandler: (@Sendable (WireValue) -> Void)?
    private var namedEventHandlers: [String: @Sendable (WireValue) -> Void] = [:]
    private var reconnectHandlers: [ObjectIdentifier: @Sendable () -> Void] = [:]
    private var reconnectingInBackground = false
    private let reconnectLock = NSLock()
    private let deadlines: DaemonConnection.Deadlines
    /// Request deadlines and reconnection retries fire here, never on a global queue (whose
    /// threads blocking work may hold).
    private let timers = DispatchQueue(label: "folio.daemon.timers")

    /// Connects to the daemon at `socketPath` and says hello.
    ///
    /// - Throws: `DaemonConnection.Error` when nothing listens there or the daemon speaks another
    ///   protocol version.
    /// - Parameter app: the app this connection declares (by default the process's `FOLIO_APP_ID`).
    /// - Parameter requestTimeout: how long a request may wait for its reply (by default 60 s, or
    ///   `FOLIO_REQUEST_TIMEOUT` seconds); connecting and hello take at most `FOLIO_CONNECT_TIMEOUT`
    ///   (10 s). A daemon that hangs gives a clear error, never a hang.
    package init(
        socketPath: String, app: String? = AppIdentity.current, requestTimeout: Duration? = nil,
        logger: Logger = Logger(label: "folio.coordination")
    ) throws {
        self.socketPath = socketPath
        self.app = app
        var deadlines = DaemonConnection.Deadlines.fromEnvironment
        if let requestTimeout { deadlines.request = requestTimeout }
        self.deadlines = deadlines
        connection = try Self.connect(socketPath, app: app, deadlines: deadlines)
        super.init(logger: logger)
        startReading(connection)
    }

    /// Opens a connection and says hello.
    private static func connect(_ socketPath: String, app: String?, deadlines: DaemonConnection.Deadlines) throws -> DaemonConnection {
        let connection = try DaemonConnection(socketPath: socketPath, deadlines: deadlines)
        let hello = Hello(
            protocol: Int64(DaemonConnection.protocolVersion), pid: Int64(getpid()), name: ProcessInfo.processInfo.processName, app: app)
        let reply = try connection.handshake(["id": 0, "method": .string(Hello.method), "params": try hello.encodedParams()])
        if let error = reply["error"] {
            throw DaemonConnection.Error(message: "the daemon at \(socketPath) refused this process: \(error["message"]?.stringValue ?? "\(error)")")
        }
        let accepted = try? WireValueDecoder(root: "the reply to hello").decode(HelloReply.self, from: reply["result"])
        guard accepted?.protocol == Int64(DaemonConnection.protocolVersion) else {
            throw DaemonConnection.Error(
                message: "the daemon at \(socketPath) does not speak protocol \(DaemonConnection.protocolVersion): \(reply)")
        }
        return connection
    }

    private func startReading(_ connection: DaemonConnection) {
        connection.startReading(
            onFrame: { [weak self] frame in self?.received(frame) },
            onClose: { [weak self, weak connection] reason in
                guard let self, let connection else { return }
                self.connectionClosed(connection, reason)
            })
    }

    /// Closes the connection: the daemon releases this client's claims and presenters.
    package func disconnect() {
        let current = stateLock.withLock {
            closedOnPurpose = true
            return connection
        }
        current.shutdownBothWays()
    }

    /// After the daemon went away (a restart, say): connects again, at most once a second, and
    /// registers this process's presenters anew. Claims that were waiting have failed already.
    private func reconnect() throws(CoordinationFailure) {
        // One attempt at a time (the next use and the background retry may race); the second finds
        // the connection back and does nothing.
        reconnectLock.lock()
        defer { reconnectLock.unlock() }
        guard stateLock.withLock({ lost != nil }) else { return }
        let fresh: DaemonConnection
        do {
            fresh = try Self.connect(socketPath, app: app, deadlines: deadlines)
        } catch {
            throw CoordinationFailure(kind: .connectionLost, message: "no Folio daemon answers on \(socketPath): \(error)")
        }
        stateLock.withLock {
            connection = fresh
            lost = nil
        }
        startReading(fresh)
        logger.notice("reconnected to the Folio daemon", metadata: ["socket": "\(socketPath)"])
        for (number, purpose, path) in presenterRegistrations() {
            try transportAddPresenter(number, purpose: purpose, path: path)
        }
        for handler in stateLock.withLock({ Array(reconnectHandlers.values) }) { timers.async(execute: handler) }
    }

    // MARK: Sending

    private func send(_ frame: WireValue) throws(CoordinationFailure) {
        stateLock.lock()
        let failure = lost
        let mayRetry = failure != nil && !closedOnPurpose && ContinuousClock.now - lastReconnectAttempt > .seconds(1)
        if mayRetry { lastReconnectAttempt = .now }
        let current = connection
        stateLock.unlock()
        if let failure {
            guard mayRetry else { throw failure }
            try reconnect()
            return try send(frame)
        }
        do { try current.send(frame) } catch {
            throw CoordinationFailure(kind: .connectionLost, message: "cannot write to the Folio daemon: \(error.message)")
        }
    }

    /// Sends a typed request as a notification (no reply; a failure is logged).
    package func post<Request: DaemonRequest>(_ request: Request) {
        do { try notify(request) } catch {
            logger.warning("daemon notification not sent", metadata: ["method": "\(Request.method)", "error": "\(error.message)"])
        }
    }

    /// Sends a typed request as a notification; throws when it could not be written.
    private func notify<Request: DaemonRequest>(_ request: Request) throws(CoordinationFailure) {
        try send(["method": .string(Request.method), "params": try request.encodedParams()])
    }

    /// How long a request may wait for its reply.
    package enum Deadline: Sendable {
        /// The connection's request deadline (60 s, or `FOLIO_REQUEST_TIMEOUT`).
        case standard
        /// This long.
        case after(Duration)
        /// No deadline: a wait on a person (the picker), which ends when they answer or the
        /// daemon or its front end goes away.
        case person
    }

    private func limit(_ deadline: Deadline) -> Duration? {
        switch deadline {
        case .standard: deadlines.request
        case .after(let duration): duration
        case .person: nil
        }
    }

    /// Sends a request and waits for its reply (for `status` and other non-claim requests), at
    /// most `deadline`. Blocks the calling thread: from async code use the `async` form.
    ///
    /// - Throws: `CoordinationFailure` with kind `timedOut` when no reply came in time.
    private func request(_ method: String, params: WireValue, deadline: Deadline) throws(CoordinationFailure) -> WireValue {
        let box = ResultBox()
        let id = try begin(method, params) { box.set($0) }
        let limit = limit(deadline)
        // The caller reads its own reply when no other thread reads (see `DaemonConnection`).
        let connection = currentConnection
        switch connection.wait(until: box.isSet, deadline: limit.map { .now + $0 }) {
        case .done: break
        case .timedOut:
            if let waiter = stateLock.withLock({ requests.removeValue(forKey: id) }) {
                waiter(.failure(timedOut(method, limit ?? .zero)))
            } else {
                _ = connection.wait(until: box.isSet, deadline: nil)  // the reply is being handed over
            }
        case .ended:
            // `connectionClosed` failed every waiting request before the connection reported its end.
            if let waiter = stateLock.withLock({ requests.removeValue(forKey: id) }) {
                waiter(.failure(CoordinationFailure(kind: .connectionLost, message: "the connection to the Folio daemon was lost")))
            }
        }
        return try box.get()
    }

    private var currentConnection: DaemonConnection { stateLock.withLock { connection } }

    /// Waits for a claim's outcome, reading the connection meanwhile when no other thread does. A
    /// claim has no deadline (as on Apple's systems); a lost connection fails it.
    override func wait(for waiter: ClaimWaiter) -> Result<[String], CoordinationFailure> {
        _ = currentConnection.wait(until: waiter.isFinished, deadline: nil)
        return waiter.wait()
    }

    /// Sends a request and suspends until its reply, at most `deadline`. No thread waits meanwhile.
    private func request(_ method: String, params: WireValue, deadline: Deadline) async throws(CoordinationFailure) -> WireValue {
        let limit = limit(deadline)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<WireValue, CoordinationFailure>, Never>) in
            let once = ResumeOnce(continuation)
            do throws(CoordinationFailure) {
                let id = try begin(method, params) { once.resume($0) }
                if let limit {
                    timers.asyncAfter(deadline: .now() + Self.interval(limit)) {
                        [weak self] in
                        guard let self, stateLock.withLock({ requests.removeValue(forKey: id) }) != nil else { return }
                        once.resume(.failure(timedOut(method, limit)))
                    }
                }
            } catch {
                once.resume(.failure(error))
            }
        }
        return try result.get()
    }

    /// Sends a typed request and waits for its typed reply, at most `deadline`. Blocks the calling
    /// thread: from async code use the `async` form.
    package func send<Request: DaemonRequest>(_ request: Request, deadline: Deadline = .standard) throws(CoordinationFailure) -> Request.Reply {
        let reply = try self.request(Request.method, params: try request.encodedParams(), deadline: deadline)
        return try WireValueDecoder(root: "the reply to \(Request.method)").decode(Request.Reply.self, from: reply)
    }

    /// Sends a typed request and suspends until its typed reply, at most `deadline`.
    package func send<Request: DaemonRequest>(_ request: Request, deadline: Deadline = .standard) async throws(CoordinationFailure) -> Request.Reply {
        let reply = try await self.request(Request.method, params: try request.encodedParams(), deadline: deadline)
        return try WireValueDecoder(root: "the reply to \(Request.method)").decode(Request.Reply.self, from: reply)
    }

    /// Registers `completion` for a new request's reply and sends the request; returns its id.
    private func begin(
        _ method: String, _ params: WireValue, _ completion: @escaping @Sendable (Result<WireValue, CoordinationFailure>) -> Void
    ) throws(CoordinationFailure) -> UInt64 {
        let id = makeNumber()
        stateLock.withLock { requests[id] = completion }
        do {
            try send(["id": .int(Int64(id)), "method": .string(method), "params": params])
        } catch {
            stateLock.withLock { requests[id] = nil }
            throw error
        }
        return id
    }

    /// `duration` as dispatch counts time.
    private static func interval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    private func timedOut(_ method: String, _ limit: Duration) -> CoordinationFailure {
        CoordinationFailure(kind: .timedOut, message: "the Folio daemon did not answer \(method) within \(limit) (FOLIO_REQUEST_TIMEOUT)")
    }

    override func transportSubmit(_ request: ClaimRequest) throws(CoordinationFailure) {
        let params = SubmitClaim(request).encodedParams()
        try send(["id": .int(Int64(request.claim)), "method": .string(SubmitClaim.method), "params": params])
    }

    override func release(claim: UInt64) { post(Release(claim: claim)) }

    override func cancel(claim: UInt64) { post(Cancel(claim: claim)) }

    override func moved(from: String, to: String, claim: UInt64) throws(CoordinationFailure) {
        try notify(Moved(claim: claim, from: from, to: to))
    }

    override func transportAddPresenter(_ presenter: UInt64, purpose: String, path: String?) throws(CoordinationFailure) {
        // A request, not a notification: once `addFilePresenter` returns, every process's
        // coordinations see the presenter.
        _ = try send(PresenterAdd(presenter: presenter, purpose: purpose, path: path))
    }

    override func transportUpdatePresenter(_ presenter: UInt64, path: String?) { post(PresenterUpdate(presenter: presenter, path: path)) }

    override func transportRemovePresenter(_ presenter: UInt64) { post(PresenterRemove(presenter: presenter)) }

    override func transportAnswer(_ answer: PresenterAnswer) { post(PresenterReply(answer)) }

    override func ubiquityAttributesChanged(at path: String, keys: [String]) { post(UbiquityChanged(path: path, keys: keys)) }

    // MARK: Receiving

    /// Receives the daemon's events other than presenter messages (the picker's requests, for a
    /// front end). Set it before asking for them.
    package var onEvent: (@Sendable (WireValue) -> Void)? {
        get { stateLock.withLock { eventHandler } }
        set { stateLock.withLock { eventHandler = newValue } }
    }

    /// Calls `handler` (on a global queue) after each reconnection to a restarted daemon. While an owner is registered,
    /// a lost connection is retried in the background (once a second), not only at the next use: a
    /// live query sends nothing, yet must hear of changes again.
    package func setReconnectHandler(for owner: AnyObject, _ handler: (@Sendable () -> Void)?) {
        stateLock.withLock { reconnectHandlers[ObjectIdentifier(owner)] = handler }
    }

    /// Retries the connection once a second while it is lost and someone waits for it.
    private func reconnectInBackground() {
        let start = stateLock.withLock { () -> Bool in
            guard !reconnectingInBackground, !reconnectHandlers.isEmpty else { return false }
            reconnectingInBackground = true
            return true
        }
        guard start else { return }
        timers.asyncAfter(deadline: .now() + 1) { [weak self] in self?.retryInBackground() }
    }

    private func retryInBackground() {
        let (needed, waiting) = stateLock.withLock { (lost != nil && !closedOnPurpose, !reconnectHandlers.isEmpty) }
        guard needed, waiting else {
            stateLock.withLock { reconnectingInBackground = false }
            return
        }
        do {
            try reconnect()
        } catch {
            timers.asyncAfter(deadline: .now() + 1) { [weak self] in self?.retryInBackground() }
            return
        }
        stateLock.withLock { reconnectingInBackground = false }
    }

    /// Receives the daemon's events named `event` (a live query's, say), instead of `onEvent`.
    package func setEventHandler(_ event: String, _ handler: (@Sendable (WireValue) -> Void)?) {
        stateLock.withLock { namedEventHandlers[event] = handler }
    }

    private func received(_ frame: WireValue) {
        if let event = frame["event"]?.stringValue, event != "presenter" {
            if let handler = stateLock.withLock({ namedEventHandlers[event] }) {
                handler(frame)
            } else if let handler = onEvent { handler(frame) } else { logger.debug("unexpected event from the daemon", metadata: ["event": "\(event)"]) }
            return
        }
        if frame["event"]?.stringValue == "presenter" {
            do {
                let (presenter, message, token) = try CoordinationWire.presenterEvent(frame)
                handle([.presenter(presenter, message, token: token)])
            } catch {
                logger.error("bad presenter message from the daemon", metadata: ["error": "\(error.message)"])
            }
            return
        }
        guard let id = frame["id"]?.intValue, id > 0 else {
            if let error = frame["error"] {
                logger.error("the daemon reported an error", metadata: ["error": "\(error["message"]?.stringValue ?? "?")"])
            }
            return
        }
        let number = UInt64(id)
        stateLock.lock()
        let waiter = requests.removeValue(forKey: number)
        stateLock.unlock()
        let result: Result<WireValue, CoordinationFailure> =
            frame["error"].map { .failure(CoordinationWire.failure(from: $0)) } ?? .success(frame["result"] ?? .null)
        if let waiter {
            waiter(result)
            return
        }
        switch result {
        case .success(let value):
            handle([.granted(claim: number, paths: (value["paths"]?.arrayValue ?? []).compactMap(\.stringValue))])
        case .failure(let failure):
            handle([.failed(claim: number, failure: failure)])
        }
    }

    private func connectionClosed(_ closed: DaemonConnection, _ reason: String) {
        let failure = CoordinationFailure(kind: .connectionLost, message: "the connection to the Folio daemon was lost: \(reason)")
        stateLock.lock()
        guard closed === connection else {
            stateLock.unlock()
            return
        }
        lastReconnectAttempt = .now - .seconds(2)
        lost = failure
        let waiting = requests
        requests.removeAll()
        let expected = closedOnPurpose
        stateLock.unlock()
        if !expected { logger.warning("lost the Folio daemon; reconnecting on next use", metadata: ["reason": "\(reason)"]) }
        for waiter in waiting.values { waiter(.failure(failure)) }
        failAllPending(failure)
        if !expected { reconnectInBackground() }
    }
}

/// Resumes a continuation once, whichever of the reply and the deadline comes first.
private final class ResumeOnce: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<WireValue, CoordinationFailure>, Never>?>

    init(_ continuation: CheckedContinuation<Result<WireValue, CoordinationFailure>, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ result: Result<WireValue, CoordinationFailure>) {
        continuation.withLock { pending in
            defer { pending = nil }
            return pending
        }?.resume(returning: result)
    }
}

/// One request's reply, for a caller that waits.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<WireValue, CoordinationFailure>?
    func set(_ value: Result<WireValue, CoordinationFailure>) {
        lock.lock()
        result = value
        lock.unlock()
    }
    func isSet() -> Bool { lock.withLock { result != nil } }
    func get() throws(CoordinationFailure) -> WireValue {
        lock.lock()
        defer { lock.unlock() }
        return try result!.get()
    }
}

/// Stands in when `FOLIO_COORDINATION=daemon` and no daemon answers: every coordination fails with
/// the reason, rather than silently coordinating only within this process.
final class UnreachableCoordinationEngine: CoordinationEngine, @unchecked Sendable {
    private let failure: CoordinationFailure

    init(reason: String) {
        failure = CoordinationFailure(kind: .connectionLost, message: "no Folio daemon is reachable: \(reason)")
        super.init(logger: Logger(label: "folio.coordination"))
    }

    override func transportSubmit(_ request: ClaimRequest) throws(CoordinationFailure) { throw failure }
    override func release(claim: UInt64) {}
    override func cancel(claim: UInt64) {}
    override func moved(from: String, to: String, claim: UInt64) throws(CoordinationFailure) { throw failure }
    override func transportAddPresenter(_ presenter: UInt64, purpose: String, path: String?) throws(CoordinationFailure) {
        throw failure
    }
    override func transportUpdatePresenter(_ presenter: UInt64, path: String?) {}
    override func transportRemovePresenter(_ presenter: UInt64) {}
    override func transportAnswer(_ answer: PresenterAnswer) {}
    override func ubiquityAttributesChanged(at path: String, keys: [String]) {}
}
