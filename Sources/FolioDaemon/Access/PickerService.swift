import Folio
import FolioSystem
import Foundation
import Logging
import SystemPackage

/// The document picker, run in the daemon — out of the app's process, so an app learns only what
/// the user chose. A front end (`folio pick --serve`, a script) attaches over the socket and is
/// handed each request as a `picker` event; its choice comes back as `picker.choose`. Without one,
/// the browser page shows the request while a page is open (`PickerPage`). The daemon then carries
/// out the mode (apple-semantics §5.1) and answers the app:
/// - import: copies into the app's `tmp/Imports`, removed when the app's connection ends;
/// - open: the originals, with a session grant and a reference document in `Library/References`;
/// - export: copies in the chosen folder, the app's originals untouched;
/// - move: the documents moved to the chosen folder, granted, with a reference document.
final class PickerService: @unchecked Sendable {
    weak var access: AccessService?
    let pools: DaemonPools
    let logger: Logger
    private let lock = NSLock()
    private weak var frontEnd: ClientSession?
    /// The browser page, while one is open: the front end when no socket front end is attached.
    private weak var page: (any PickerPage)?
    /// Opens a browser page for a request when no front end is there (set by the web service):
    /// the page's front end, which the request waits for, or nil when no browser can be started.
    private var openPage: (@Sendable () -> (any PickerPage)?)?
    /// How long a request waits for the page it opened.
    static let pageDeadline: Duration = .seconds(120)
    private var pending: [UInt64: Pending] = [:]
    private var lastNumber: UInt64 = 0
    /// Import folders per connection, removed when it ends.
    private var imports: [ObjectIdentifier: [String]] = [:]

    struct Pending {
        weak var session: ClientSession?
        let reply: Int64
        let request: PickerRequest
        let app: String?
        let client: UInt32?
        /// The front end shown the request (a socket's session or the page): only it may answer.
        weak var shownTo: (any AnyObject & Sendable)?
    }

    init(pools: DaemonPools, logger: Logger) {
        self.pools = pools
        self.logger = logger
    }

    /// Makes `session` the front end; one at a time.
    func attach(_ session: ClientSession) throws(CoordinationFailure) {
        lock.lock()
        defer { lock.unlock() }
        if let current = frontEnd, current !== session {
            throw CoordinationFailure(kind: .failed, message: "a picker front end is attached already (pid \(current.peerPID))")
        }
        frontEnd = session
        logger.info("picker front end attached", metadata: ["pid": "\(session.peerPID)"])
    }

    /// Hands an app's request to the front end (a socket's, else the page); the app's reply comes
    /// when the user chose.
    func pick(_ request: PickerRequest, from session: ClientSession, reply: Int64) throws(CoordinationFailure) {
        lock.lock()
        var front: (any AnyObject & Sendable)? = frontEnd ?? page
        var opened = false
        if front == nil, let openPage {
            // No page is open: open one in the user's browser; the request waits for it.
            lock.unlock()
            front = openPage()
            opened = front != nil
            lock.lock()
        }
        guard let front else {
            lock.unlock()
            throw CoordinationFailure(
                kind: .failed, message: "no document picker is showing: open the browser page (`folio browse`) or run `folio pick --serve`")
        }
        lastNumber += 1
        let number = lastNumber
        pending[number] = Pending(session: session, reply: reply, request: request, app: session.app, client: session.client, shownTo: front)
        lock.unlock()
        if opened { failUnlessShown(number, after: Self.pageDeadline) }
        var event: [String: WireValue] = ["event": "picker", "request": .int(Int64(number)), "params": request.wireValue]
        if let app = session.app {
            event["app"] = .string(app)
            if let name = access?.catalog.manifest(app)?.name { event["appName"] = .string(name) }
            if let access { event["container"] = .string(AppContainer(appIdentifier: app, paths: access.catalog.paths).url.path) }
        }
        if let socket = front as? ClientSession {
            socket.write([.object(event)])
        } else if let page = front as? any PickerPage {
            page.present(number, .object(event))
        }
    }

    /// Sets how a page is opened for a request that finds none.
    func setPageOpener(_ opener: @escaping @Sendable () -> (any PickerPage)?) {
        lock.withLock { openPage = opener }
    }

    /// A request that opened a page fails if no page came to show it within `deadline` (a task
    /// that sleeps: nothing waits on a thread).
    private func failUnlessShown(_ number: UInt64, after deadline: Duration) {
        Task { [weak self] in
            try? await Task.sleep(for: deadline)
            guard let self else { return }
            let orphan = self.lock.withLock { () -> Pending? in
                guard self.page == nil, let request = self.pending[number] else { return nil }
                self.pending[number] = nil
                return request
            }
            if let orphan {
                self.reply(orphan, .failure(CoordinationFailure(kind: .failed, message: "no browser page opened for the picker within \(deadline)")))
            }
        }
    }

    /// The browser page opened (`page`) or closed (nil). Requests shown to a page that closed are
    /// cancelled, as closing the picker's tab would.
    func setPage(_ page: (any PickerPage)?) {
        let orphans = lock.withLock { () -> [UInt64: Pending] in
            let previous = self.page
            self.page = page
            guard let previous, previous !== page else { return [:] }
            let shown = pending.filter { $0.value.shownTo === previous }
            for number in shown.keys { pending[number] = nil }
            return shown
        }
        for orphan in orphans.values {
            reply(orphan, .failure(CoordinationFailure(kind: .userCancelled, message: "the picker's page was closed")))
        }
    }

    /// The request `number` as shown to the page, if it is still open there.
    func pendingRequest(_ number: UInt64) -> PickerRequest? {
        lock.withLock { pending[number].flatMap { $0.shownTo === page && page != nil ? $0.request : nil } }
    }

    /// The front end's answer: validated, carried out, and sent to the app. A choice that breaks
    /// the request's rules is refused and the request stays open for another choice. `admit`
    /// checks each chosen item as it was resolved (the page: inside what it may browse).
    func choose(
        _ number: UInt64, paths: [String]?, from chooser: any AnyObject & Sendable,
        admit: (ResolvedItem) throws(CoordinationFailure) -> Void = { _ in }
    ) throws(CoordinationFailure) {
        lock.lock()
        let isFrontEnd = frontEnd === chooser || page === chooser
        let found = pending[number]
        lock.unlock()
        guard isFrontEnd else { throw CoordinationFailure(kind: .denied, message: "this connection is not the picker front end") }
        guard let request = found, request.shownTo === chooser else {
            throw CoordinationFailure(kind: .notFound, message: "no picker request \(number) is open")
        }
        // The request is taken out while it is answered, so two answers at once (two pages, a
        // double click and a button) cannot both carry it out; a refused choice puts it back.
        guard lock.withLock({ pending.removeValue(forKey: number) }) != nil else {
            throw CoordinationFailure(kind: .notFound, message: "picker request \(number) was answered already")
        }
        guard let paths else {
            reply(request, .failure(CoordinationFailure(kind: .userCancelled, message: "the user cancelled the picker")))
            return
        }
        guard let access else { throw CoordinationFailure(kind: .failed, message: "the daemon is stopping") }
        guard request.session != nil else {
            // The app went away while the user chose: nothing is copied, moved or granted.
            throw CoordinationFailure(kind: .notFound, message: "the app that asked has gone")
        }
        let chosen: PickerChoice.Checked
        do {
            chosen = try PickerChoice.validate(paths, for: request.request, app: request.app, access: access, admit: admit)
        } catch {
            lock.withLock { pending[number] = request }
            throw error
        }
        // The copy or move waits for claims on the documents: on the slow pool, never a shared one.
        pools.submit(.slow) { [self] in
            let result = Result { () throws(CoordinationFailure) -> [WireValue] in
                try PickerChoice.carryOut(chosen, request: request.request, app: request.app, client: request.client, access: access) { folder in
                    if let session = request.session { self.lock.withLock { self.imports[ObjectIdentifier(session), default: []].append(folder) } }
                }
            }
            self.reply(request, result.map { ["urls": .array($0)] })
        }
    }

    private func reply(_ request: Pending, _ result: Result<WireValue, CoordinationFailure>) {
        if let page = request.shownTo as? any PickerPage { page.withdraw() }
        guard let session = request.session else { return }
        switch result {
        case .success(let value): session.write([WireFrame.result(.int(request.reply), value)])
        case .failure(let failure): session.write([WireFrame.error(.int(request.reply), failure)])
        }
    }

    /// A connection ended: as the front end, its open requests fail; as an app, its requests are
    /// dropped and its imported documents removed.
    func sessionClosed(_ session: ClientSession) {
        let (orphans, folders, pageToTell) = lock.withLock { () -> ([Pending], [String], (any PickerPage)?) in
            var orphans: [Pending] = []
            if frontEnd === session {
                frontEnd = nil
                orphans = pending.values.filter { $0.shownTo === session }
                pending = pending.filter { $0.value.shownTo !== session }
            }
            // The app's own requests go; the page is told if it showed one.
            let gone = pending.filter { $0.value.session == nil || $0.value.session === session }
            for number in gone.keys { pending[number] = nil }
            let tell = gone.values.contains { $0.shownTo != nil && $0.shownTo === page } ? page : nil
            return (orphans, imports.removeValue(forKey: ObjectIdentifier(session)) ?? [], tell)
        }
        for orphan in orphans {
            reply(orphan, .failure(CoordinationFailure(kind: .failed, message: "the picker front end went away")))
        }
        pageToTell?.withdraw()
        for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
    }
}

/// A front end that is not a socket connection: the browser page. It is shown each request and
/// told when requests it showed may have ended (answered, cancelled, or the app went away), so it
/// asks which are still open.
protocol PickerPage: AnyObject, Sendable {
    func present(_ number: UInt64, _ event: WireValue)
    func withdraw()
}
