import Folio
import Synchronization

/// What the daemon holds for its clients, charged to the app each connection is (its own socket's:
/// a sandboxed app) or to the user's own clients as one, and to the daemon as a whole — never only
/// per connection, which a client multiplies by opening more. Each app gets a cap on its
/// connections and a budget of bytes held for it: frames not yet complete, and replies and events
/// written past a connection's high-water mark that its client has not read. Past the budget (its
/// own or the daemon's), the app's newest connection is closed with a clear error, and every other
/// app and the user's clients go on being answered. Waiting claims are bounded per app by the
/// arbiter (``CoordinationArbiter/maximumClaims(for:)``).
final class ClientBudgets: Sendable {
    /// One party's limits.
    struct Limits: Sendable {
        /// Connections open at once.
        var connections: Int
        /// Bytes of incomplete frames and unread replies across its connections.
        var pendingBytes: Int
    }

    /// A sandboxed app's.
    static let app = Limits(connections: 64, pendingBytes: 8 << 20)
    /// The user's own clients', all together (the CLI, the page's, unsandboxed apps).
    static let user = Limits(connections: 1024, pendingBytes: 64 << 20)
    /// Bytes of incomplete frames and unread replies across every client.
    static let daemonPendingBytes = 96 << 20

    /// An open connection's place in its party's budget.
    struct Ticket: Sendable, Hashable {
        let party: String
        let number: UInt64
    }

    private struct Connection {
        var number: UInt64
        /// Bytes of incomplete frames.
        var pending = 0
        /// Bytes written to it past its channel's high-water mark, not yet taken by the client.
        var unread = 0
        var close: @Sendable (String) -> Void
    }

    private struct Usage {
        /// Oldest first.
        var connections: [Connection] = []
        var pending = 0
    }

    /// Requests of one party running on the pools, and those waiting to.
    private struct Workers {
        var running = 0
        var waiting: [@Sendable () -> Void] = []
    }

    /// Requests a sandboxed app runs on the pools at once (the user's clients: no limit).
    static let appWorkers = 1

    private struct State {
        var workers: [String: Workers] = [:]
        var parties: [String: Usage] = [:]
        var pending = 0
        var next: UInt64 = 0
    }

    private let state = Mutex(State())

    /// The party a connection is charged to: its app (nil: the user's own clients).
    static func party(app: String?) -> String { app.map { "app:" + $0 } ?? "user" }

    private static func limits(_ party: String) -> Limits { party == "user" ? user : app }

    /// Admits a connection of `party`, which `close` closes with a message; nil (and a reason)
    /// when the party has all the connections it may.
    func open(_ party: String, close: @escaping @Sendable (String) -> Void) -> Result<Ticket, BudgetRefusal> {
        state.withLock { state in
            let limit = Self.limits(party).connections
            guard state.parties[party, default: Usage()].connections.count < limit else {
                return .failure(BudgetRefusal(message: "\(Self.name(party)) has \(limit) connections open, the most it may; close one first"))
            }
            state.next += 1
            state.parties[party, default: Usage()].connections.append(Connection(number: state.next, close: close))
            return .success(Ticket(party: party, number: state.next))
        }
    }

    /// Releases a connection's share.
    func close(_ ticket: Ticket) {
        state.withLock { state in
            guard var usage = state.parties[ticket.party], let index = usage.connections.firstIndex(where: { $0.number == ticket.number }) else { return }
            let pending = usage.connections[index].pending + usage.connections[index].unread
            usage.pending -= pending
            state.pending -= pending
            usage.connections.remove(at: index)
            state.parties[ticket.party] = usage.connections.isEmpty ? nil : usage
        }
    }

    /// How many connections the ticket's party has open (to share its turns among them).
    func connections(of party: String) -> Int {
        state.withLock { $0.parties[party]?.connections.count ?? 0 }
    }

    /// Records that the connection now holds `bytes` of incomplete frames. Past the party's budget
    /// or the daemon's, the party's newest connection is closed (told why); returns whether the
    /// caller's own connection is still within bounds.
    @discardableResult
    func holdPending(_ ticket: Ticket, bytes: Int) -> Bool {
        charge(ticket, what: "unfinished frames") { connection in
            defer { connection.pending = bytes }
            return bytes - connection.pending
        }
    }

    /// Adds `bytes` (negative: takes them away) to what the connection's client has not read of
    /// what was written to it past its channel's high-water mark: replies, and events (a
    /// presenter's messages, a query's results) that a client which never reads would otherwise
    /// pile up without bound. Over budget as ``holdPending(_:bytes:)``.
    @discardableResult
    func holdUnread(_ ticket: Ticket, adding bytes: Int) -> Bool {
        charge(ticket, what: "replies and events it has not read") { connection in
            let delta = max(bytes, -connection.unread)
            connection.unread += delta
            return delta
        }
    }

    /// Applies `change` to the ticket's connection (it returns how many bytes it added); past the
    /// party's budget or the daemon's, closes the party's newest connection.
    private func charge(_ ticket: Ticket, what: String, _ change: (inout Connection) -> Int) -> Bool {
        let closing: (@Sendable (String) -> Void, String, UInt64)? = state.withLock { state in
            guard var usage = state.parties[ticket.party], let index = usage.connections.firstIndex(where: { $0.number == ticket.number }) else {
                return nil
            }
            let delta = change(&usage.connections[index])
            usage.pending += delta
            state.pending += delta
            state.parties[ticket.party] = usage
            let limit = Self.limits(ticket.party).pendingBytes
            guard delta > 0, usage.pending > limit || state.pending > Self.daemonPendingBytes, let newest = usage.connections.last else { return nil }
            let message =
                usage.pending > limit
                ? "\(Self.name(ticket.party)) holds \(limit >> 20) MiB of unfinished frames and unread replies, the most it may (this time: \(what)): closing its newest connection"
                : "the daemon holds \(Self.daemonPendingBytes >> 20) MiB of unfinished frames and unread replies, the most it may (this time: \(what)): closing this party's newest connection"
            // Its share goes at once: the connection is as good as closed.
            let share = newest.pending + newest.unread
            usage.pending -= share
            state.pending -= share
            usage.connections[usage.connections.count - 1].pending = 0
            usage.connections[usage.connections.count - 1].unread = 0
            state.parties[ticket.party] = usage
            return (newest.close, message, newest.number)
        }
        guard let (close, message, number) = closing else { return true }
        close(message)
        return number != ticket.number
    }

    /// Starts `work` (which hands a request to a pool) now if the party may run another request
    /// there, else once one of its own is done (``workerDone(_:)``): an app's requests take turns,
    /// however many connections it opens.
    func runWorker(_ party: String, _ work: @escaping @Sendable () -> Void) {
        let now: Bool = state.withLock { state in
            guard party != "user" else { return true }
            if state.workers[party, default: Workers()].running < Self.appWorkers {
                state.workers[party, default: Workers()].running += 1
                return true
            }
            state.workers[party, default: Workers()].waiting.append(work)
            return false
        }
        if now { work() }
    }

    /// A request `runWorker` started is done: the party's next waiting one starts.
    func workerDone(_ party: String) {
        guard party != "user" else { return }
        let next: (@Sendable () -> Void)? = state.withLock { state in
            guard var workers = state.workers[party] else { return nil }
            if workers.waiting.isEmpty {
                workers.running -= 1
                state.workers[party] = workers.running == 0 ? nil : workers
                return nil
            }
            let next = workers.waiting.removeFirst()
            state.workers[party] = workers
            return next
        }
        next?()
    }

    private static func name(_ party: String) -> String { party == "user" ? "the user's clients" : String(party.dropFirst(4)) }
}

/// A connection refused by its party's budget.
struct BudgetRefusal: Error, Sendable {
    var message: String
}
