import FolioSystem

/// A claim's number within its client.
package struct ClaimKey: Hashable, Sendable {
    package var client: UInt32
    package var claim: UInt64
}

/// A presenter's number within its client.
package struct PresenterKey: Hashable, Sendable {
    package var client: UInt32
    package var presenter: UInt64
}

/// One item of a queued claim.
struct ItemState {
    var path: String
    var access: ClaimAccess
    /// The lock key: the outermost enclosing package, or the path.
    var key: String
    /// For plain writes with directory presenters above: whether the item existed when granted
    /// (so its appearance can be reported).
    var existedBefore: Bool? = nil
}

/// A claim in the queue.
final class Claim {
    enum Phase: String { case waiting, messaging, granted }

    let key: ClaimKey
    let purpose: String
    let presenter: PresenterKey?
    let sequence: UInt64
    var items: [ItemState]
    var includesContents = false
    /// The bytes of its paths and purpose, counted against its client's bound.
    var bytes = 0
    var phase = Phase.waiting
    let submittedAt = ContinuousClock.now
    var grantedAt: ContinuousClock.Instant?
    /// Messages sent and not answered: token → presenter.
    var awaiting: [UInt64: PresenterKey] = [:]
    /// Messages not sent yet, per presenter (each presenter gets its messages one at a time).
    var remaining: [PresenterKey: [PresenterMessage]] = [:]
    /// Relinquishments answered with a reacquirer, to run when the claim ends.
    var reacquirers: [(PresenterKey, UInt64)] = []

    init(key: ClaimKey, purpose: String, presenter: PresenterKey?, sequence: UInt64, items: [ItemState]) {
        self.key = key
        self.purpose = purpose
        self.presenter = presenter
        self.sequence = sequence
        self.items = items
    }
}

/// A registered presenter.
struct PresenterRecord {
    var purpose: String
    /// The presented item's normalized path; nil while it "does not exist yet".
    var path: String?
}

/// A message waiting for its answer.
struct TokenRecord {
    /// The claim waiting for the answer; nil once that claim ended (a late relinquishment still gets
    /// its reacquirer run).
    var claim: ClaimKey?
    var presenter: PresenterKey
    var message: PresenterMessage
    var sentAt: ContinuousClock.Instant
}

/// A program's open waiting for coordinated writes to end.
struct ProgramOpen {
    /// The file, as a reading claim would name it.
    var item: ItemState
    /// The opening process, whose own claims do not hold it back.
    var process: Int32
    var since = ContinuousClock.now
    var proceed: @Sendable (Bool) -> Void
}

/// A connected client.
struct ClientRecord {
    let sink: any ArbiterClient
    var pid: Int32
    var name: String
    /// Whom its claims are charged to with others' (an app's connections together), if anyone.
    var party: String?
    /// The claims it holds or waits for, and the bytes of their paths and purposes (bounded: see
    /// `CoordinationArbiter.maximumClaimsPerClient`).
    var claims = 0
    var claimBytes = 0
}

/// Everything the arbiter knows, guarded by its lock.
struct ArbiterState {
    var clients: [UInt32: ClientRecord] = [:]
    /// Claims held or waited for by each party's clients together.
    var partyClaims: [String: Int] = [:]
    var nextClient: UInt32 = 0
    var claims: [ClaimKey: Claim] = [:]
    /// Claims in arrival order.
    var queue: [Claim] = []
    var sequence: UInt64 = 0
    var presenters: [PresenterKey: PresenterRecord] = [:]
    var presentersByPath: [String: [PresenterKey]] = [:]
    var tokens: [UInt64: TokenRecord] = [:]
    var nextToken: UInt64 = 0
    var packageExtensions: [String: Bool] = [:]
    /// Uncoordinated-change watching: the inotify watcher, watch counts per folder, the folders
    /// each presenter needs, and what presenters were last told of each item.
    var watcher: InotifyWatcher?
    var watchCounts: [String: Int] = [:]
    var presenterWatches: [PresenterKey: [String]] = [:]
    var stamps: [String: ItemStamp] = [:]
    /// Opens by programs that do not coordinate (through the drive's mount), waiting for other
    /// processes' granted writes to end, by number.
    var programOpens: [UInt64: ProgramOpen] = [:]
    var nextProgramOpen: UInt64 = 0
    private var outbox: [(UInt32, ArbiterOutput)] = []

    /// Queues an output for a client; it is delivered after the lock is released.
    mutating func emit(to client: UInt32, _ output: ArbiterOutput) {
        outbox.append((client, output))
    }

    /// The queued outputs, grouped by client in first-output order.
    mutating func takeOutbox() -> [(any ArbiterClient, [ArbiterOutput])] {
        guard !outbox.isEmpty else { return [] }
        var order: [UInt32] = []
        var grouped: [UInt32: [ArbiterOutput]] = [:]
        for (client, output) in outbox {
            if grouped[client] == nil { order.append(client) }
            grouped[client, default: []].append(output)
        }
        outbox.removeAll(keepingCapacity: true)
        return order.compactMap { client in
            guard let sink = clients[client]?.sink else { return nil }
            return (sink, grouped[client]!)
        }
    }

    mutating func index(_ key: PresenterKey, at path: String?) {
        guard let path else { return }
        presentersByPath[path, default: []].append(key)
    }

    mutating func unindex(_ key: PresenterKey, at path: String?) {
        guard let path, var list = presentersByPath[path] else { return }
        list.removeAll { $0 == key }
        presentersByPath[path] = list.isEmpty ? nil : list
    }
}
