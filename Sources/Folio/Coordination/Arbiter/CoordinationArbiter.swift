import Foundation
import FolioSystem
package import Logging
import SystemPackage
import UniformTypes

/// The lock table and presenter registry of file coordination, as `filecoordinationd` keeps them on
/// Apple's systems. One arbiter serves one process (the in-process engine) or every process of the
/// user (the daemon); either way its clients see the same semantics.
///
/// Claims wait in one queue, first come first served: a claim starts once no earlier claim of
/// another purpose conflicts with it (readers share, writers exclude, structural writes on a
/// directory exclude its contents, anything inside a package counts as the package). It then sends
/// the presenter messages Apple's table prescribes, waits for their answers (each with a timeout),
/// and is granted. Releasing it runs reacquirers and sends change notifications.
///
/// Every entry point takes the lock, updates the state, and delivers the resulting outputs to the
/// clients after unlocking, so a client may call back from `receive` without deadlock.
package final class CoordinationArbiter: @unchecked Sendable {
    /// Tunables.
    package struct Configuration: Sendable {
        /// How long a presenter may take to answer before the waiting claim fails.
        package var presenterTimeout: Duration
        /// Whether a filename extension names a package type (a directory shown as one document).
        package var isPackageExtension: @Sendable (String) -> Bool
        /// Whether uncoordinated writes are watched for (inotify) and reported to presenters.
        package var watchesUncoordinatedChanges: Bool
        /// Hears each coordinated write as it ends, before waiting claims proceed ("stitching":
        /// the daemon's index). Called under the arbiter's lock: it must only record and return.
        package var writeEnded: (@Sendable (CoordinatedChange) -> Void)?

        package init(
            presenterTimeout: Duration = .seconds(30),
            isPackageExtension: @escaping @Sendable (String) -> Bool = Self.packageByType,
            watchesUncoordinatedChanges: Bool = true
        ) {
            self.presenterTimeout = presenterTimeout
            self.isPackageExtension = isPackageExtension
            self.watchesUncoordinatedChanges = watchesUncoordinatedChanges
        }

        /// The defaults, with `FOLIO_PRESENTER_TIMEOUT` (seconds) applied when set.
        package static func fromEnvironment() -> Configuration {
            var configuration = Configuration()
            if let text = ProcessInfo.processInfo.environment["FOLIO_PRESENTER_TIMEOUT"], let seconds = Double(text),
                seconds > 0, seconds.isFinite
            {
                configuration.presenterTimeout = .milliseconds(Int64(seconds * 1000))
            }
            return configuration
        }

        /// Asks the type registry whether the extension's type conforms to com.apple.package.
        package static let packageByType: @Sendable (String) -> Bool = { ext in
            UTType.isPackageExtension(ext)
        }
    }

    let configuration: Configuration
    let logger: Logger
    let scheduleWork: @Sendable (Duration, @escaping @Sendable () -> Void) -> Void
    private let lock = NSLock()
    var state = ArbiterState()
    /// Where presenter timeouts fire: a private serial queue, whose work only takes the lock.
    private static let timers = DispatchQueue(label: "folio.coordination.timers")

    /// Creates an arbiter.
    ///
    /// - Parameter schedule: runs a closure after a delay (presenter timeouts); by default on the
    ///   arbiters' own timer queue (never a global queue, whose threads blocking work may hold).
    package init(
        configuration: Configuration = Configuration(), logger: Logger = Logger(label: "folio.coordination"),
        schedule: (@Sendable (Duration, @escaping @Sendable () -> Void) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.scheduleWork =
            schedule ?? { delay, work in
                let (seconds, attoseconds) = delay.components
                let nanos = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
                Self.timers.asyncAfter(deadline: .now() + .nanoseconds(Int(nanos)), execute: work)
            }
    }

    deinit {
        state.watcher?.stop()
    }

    // MARK: Entry points

    /// Registers a client and returns its number.
    /// `party` charges its claims together with other clients' of the same party (an app's
    /// connections): ``maximumClaimsPerParty`` bounds them all.
    package func addClient(_ sink: any ArbiterClient, pid: Int32, name: String, party: String? = nil) -> UInt32 {
        perform { state in
            state.nextClient += 1
            state.clients[state.nextClient] = ClientRecord(sink: sink, pid: pid, name: name, party: party)
            return state.nextClient
        }
    }

    /// Forgets a client that left or died: its claims end (a granted one as if released), its
    /// presenters leave, and whatever waited on them proceeds.
    package func removeClient(_ client: UInt32) {
        perform { state in
            for claim in state.queue where claim.key.client == client {
                if claim.phase == .granted {
                    finishGranted(claim, state: &state)
                } else {
                    end(claim, state: &state)
                }
            }
            for key in state.presenters.keys where key.client == client {
                dropPresenter(key, state: &state)
            }
            state.clients[client] = nil
            pump(&state)
        }
    }

    /// The most claims one client may hold or wait for at once (Apple's coordinators rarely hold
    /// more than a few; the bound keeps one connection from growing the daemon without end).
    static let maximumClaimsPerClient = 1024
    /// The most claims the clients of one party (a sandboxed app's connections) may hold or wait
    /// for at once, together: opening more connections gives an app no more.
    static let maximumClaimsPerParty = 1024
    /// The most bytes of paths (and purposes) one client's claims may name at once.
    static let maximumClaimBytesPerClient = 16 << 20

    /// Queues a claim. The client hears `granted` or `failed` later.
    package func submit(_ request: ClaimRequest, from client: UInt32) throws(CoordinationFailure) {
        try performThrowing { (state: inout ArbiterState) throws(CoordinationFailure) in
            // A client that left (its connection closed while this claim was being checked) can
            // no longer hold anything: its claim would never be released.
            guard state.clients[client] != nil else { throw CoordinationFailure(kind: .connectionLost, message: "the client has gone") }
            let key = ClaimKey(client: client, claim: request.claim)
            guard state.claims[key] == nil else {
                throw CoordinationFailure(kind: .invalid, message: "claim \(request.claim) is already in use")
            }
            guard !request.items.isEmpty else { throw CoordinationFailure(kind: .invalid, message: "a claim needs items") }
            // One connection cannot make the daemon hold unbounded state.
            let bytes = request.items.reduce(request.purpose.utf8.count) { $0 + $1.path.utf8.count }
            guard let record = state.clients[client], record.claims < Self.maximumClaimsPerClient else {
                throw CoordinationFailure(
                    kind: .invalid, message: "this connection holds or waits for \(Self.maximumClaimsPerClient) claims already, the most one may")
            }
            if let party = record.party, state.partyClaims[party, default: 0] >= Self.maximumClaimsPerParty {
                throw CoordinationFailure(
                    kind: .invalid, message: "this app's connections hold or wait for \(Self.maximumClaimsPerParty) claims already, the most an app may")
            }
            guard record.claimBytes + bytes <= Self.maximumClaimBytesPerClient else {
                throw CoordinationFailure(
                    kind: .invalid,
                    message: "this connection's claims name \(Self.maximumClaimBytesPerClient >> 20) MiB of paths already, the most one may")
            }
            state.clients[client]?.claims += 1
            if let party = record.party { state.partyClaims[party, default: 0] += 1 }
            state.clients[client]?.claimBytes += bytes
            let presenter = request.presenter.map { PresenterKey(client: client, presenter: $0) }
            state.sequence += 1
            let claim = Claim(
                key: key, purpose: request.purpose, presenter: presenter, sequence: state.sequence,
                items: request.items.map { ItemState(path: $0.path, access: $0.access, key: conflictKey($0.path, &state)) })
            claim.includesContents = request.includesContents
            claim.bytes = bytes
            state.claims[key] = claim
            state.queue.append(claim)
            pump(&state)
        }
    }

    /// Releases a granted claim: reacquirers run, presenters hear what changed, waiting claims
    /// proceed.
    package func release(_ claim: UInt64, from client: UInt32) throws(CoordinationFailure) {
        try performThrowing { (state: inout ArbiterState) throws(CoordinationFailure) in
            guard let found = state.claims[ClaimKey(client: client, claim: claim)] else {
                throw CoordinationFailure(kind: .invalid, message: "no claim \(claim)")
            }
            guard found.phase == .granted else {
                throw CoordinationFailure(kind: .invalid, message: "claim \(claim) is not granted yet")
            }
            finishGranted(found, state: &state)
            pump(&state)
        }
    }

    /// Cancels a claim that is not granted yet: it fails with `cancelled`. A granted claim is left
    /// alone (its accessor is running).
    package func cancel(_ claim: UInt64, from client: UInt32) {
        perform { state in
            guard let found = state.claims[ClaimKey(client: client, claim: claim)], found.phase != .granted else {
                return
            }
            fail(found, CoordinationFailure(kind: .cancelled, message: "the coordination was cancelled"), state: &state)
            pump(&state)
        }
    }

    /// Records that the holder of a granted claim moved `from` to `to`: presenters follow the move,
    /// directories hear of it, and waiting claims on the old location now name the new one (except
    /// writes `forReplacing`, for which the moved item is a different item).
    package func moved(from: String, to: String, claim: UInt64, client: UInt32) throws(CoordinationFailure) {
        try performThrowing { (state: inout ArbiterState) throws(CoordinationFailure) in
            guard let holder = state.claims[ClaimKey(client: client, claim: claim)], holder.phase == .granted else {
                throw CoordinationFailure(
                    kind: .invalid, message: "item(at:didMoveTo:) must be called inside a granted coordinated write")
            }
            // Only an item the claim writes (or one inside a folder it writes) can have moved: a
            // notice naming anything else would move other processes' presenters and claims.
            guard holder.items.contains(where: { $0.access.isWrite && CoordinationPath.isSelfOrDescendant(from, of: $0.path) }) else {
                throw CoordinationFailure(
                    kind: .invalid, message: "item(at:didMoveTo:) names \(from), which this coordinated write does not hold")
            }
            guard from != to else { return }
            configuration.writeEnded?(.moved(from: from, to: to))
            applyMove(from: from, to: to, excluding: holder.presenter, state: &state)
        }
    }

    /// Runs `body` on the state under the lock, then delivers its outputs.
    func perform<T>(_ body: (inout ArbiterState) -> T) -> T {
        lock.lock()
        let result = body(&state)
        let outbox = state.takeOutbox()
        lock.unlock()
        deliver(outbox)
        return result
    }

    func performThrowing<T>(_ body: (inout ArbiterState) throws(CoordinationFailure) -> T) throws(CoordinationFailure) -> T {
        lock.lock()
        let result: Result<T, CoordinationFailure>
        do throws(CoordinationFailure) {
            result = .success(try body(&state))
        } catch {
            result = .failure(error)
        }
        let outbox = state.takeOutbox()
        lock.unlock()
        deliver(outbox)
        return try result.get()
    }

    private func deliver(_ outbox: [(any ArbiterClient, [ArbiterOutput])]) {
        for (sink, outputs) in outbox { sink.receive(outputs) }
    }

    // MARK: Scheduling

    /// Starts every claim that can start, grants every claim whose messages are answered.
    func pump(_ state: inout ArbiterState) {
        var index = 0
        while index < state.queue.count {
            let claim = state.queue[index]
            switch claim.phase {
            case .waiting:
                if !isBlocked(claim, at: index, state) {
                    startMessaging(claim, state: &state)
                    if claim.awaiting.isEmpty { tryGrant(claim, state: &state) }
                }
            case .messaging:
                if claim.awaiting.isEmpty { tryGrant(claim, state: &state) }
            case .granted:
                break
            }
            // A claim may have failed or ended inside; find the next one by sequence.
            if index < state.queue.count, state.queue[index] === claim { index += 1 }
        }
    }

    /// Whether an earlier claim of another purpose conflicts with `claim`. A claim still messaging a
    /// presenter does not hold back that presenter's own coordinations (a presenter that writes in
    /// answer to `savePresentedItemChanges` gets priority over the read that asked).
    private func isBlocked(_ claim: Claim, at index: Int, _ state: ArbiterState) -> Bool {
        for earlier in state.queue[..<index] where earlier.purpose != claim.purpose {
            if earlier.phase == .messaging, let presenter = claim.presenter,
                earlier.awaiting.values.contains(presenter)
            {
                continue
            }
            if conflicts(earlier, claim) { return true }
        }
        return false
    }

    private func tryGrant(_ claim: Claim, state: inout ArbiterState) {
        for other in state.queue where other !== claim && other.phase == .granted && other.purpose != claim.purpose {
            if conflicts(other, claim) { return }
        }
        claim.phase = .granted
        claim.grantedAt = ContinuousClock.now
        for index in claim.items.indices where claim.items[index].access.isWrite && !claim.items[index].access.isStructural {
            let path = claim.items[index].path
            if hasAncestorPresenter(path, state) {
                claim.items[index].existedBefore = (try? FileStatus(path: FilePath(path))) != nil
            }
        }
        state.emit(to: claim.key.client, .granted(claim: claim.key.claim, paths: claim.items.map(\.path)))
    }

    /// Whether two claims may not hold at once (their purposes differ).
    func conflicts(_ a: Claim, _ b: Claim) -> Bool {
        for x in a.items {
            for y in b.items where itemsConflict(x, y) { return true }
        }
        return false
    }

    func itemsConflict(_ x: ItemState, _ y: ItemState) -> Bool {
        if x.key == y.key { return x.access.isWrite || y.access.isWrite }
        if CoordinationPath.isAncestor(x.key, of: y.key) { return x.access.isStructural }
        if CoordinationPath.isAncestor(y.key, of: x.key) { return y.access.isStructural }
        return false
    }

    /// The key under which an item is locked: the outermost package enclosing it (or the package
    /// itself), else its own path.
    func conflictKey(_ path: String, _ state: inout ArbiterState) -> String {
        // On the UTF-8 bytes ("/" and "." are ASCII, so their indices are the string's).
        let bytes = path.utf8
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let first = bytes.index(after: start)
            let end = bytes[first...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            let component = bytes[first..<end]
            if let dot = component.lastIndex(of: UInt8(ascii: ".")), dot != component.startIndex,
                isPackageExtension(String(path[path.utf8.index(after: dot)..<end]), &state)
            {
                return String(path[..<end])
            }
            start = end
        }
        return path
    }

    func isPackageExtension(_ ext: String, _ state: inout ArbiterState) -> Bool {
        if let known = state.packageExtensions[ext] { return known }
        let answer = configuration.isPackageExtension(ext)
        if state.packageExtensions.count > 4096 { state.packageExtensions.removeAll() }
        state.packageExtensions[ext] = answer
        return answer
    }

    /// The strict ancestors of `path` that are packages, nearest first.
    func enclosingPackages(of path: String, _ state: inout ArbiterState) -> [String] {
        CoordinationPath.ancestors(of: path).filter { ancestor in
            guard let slash = ancestor.utf8.lastIndex(of: UInt8(ascii: "/")) else { return false }
            let name = ancestor[ancestor.utf8.index(after: slash)...]
            guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return false }
            return isPackageExtension(String(name[name.utf8.index(after: dot)...]), &state)
        }
    }

    // MARK: Ending claims

    /// Ends a granted claim: reacquirers, then change notifications.
    func finishGranted(_ claim: Claim, state: inout ArbiterState) {
        if let writeEnded = configuration.writeEnded {
            for item in claim.items where item.access.isWrite { writeEnded(.wrote(item.path)) }
        }
        end(claim, state: &state)
        notifyChanges(after: claim, state: &state)
    }

    /// Fails a claim that is not granted.
    func fail(_ claim: Claim, _ failure: CoordinationFailure, state: inout ArbiterState) {
        end(claim, state: &state)
        state.emit(to: claim.key.client, .failed(claim: claim.key.claim, failure: failure))
    }

    /// Removes a claim from the table, orphans its unanswered messages and runs its reacquirers.
    func end(_ claim: Claim, state: inout ArbiterState) {
        state.claims[claim.key] = nil
        state.clients[claim.key.client]?.claims -= 1
        if let party = state.clients[claim.key.client]?.party {
            state.partyClaims[party, default: 1] -= 1
            if state.partyClaims[party] == 0 { state.partyClaims[party] = nil }
        }
        state.clients[claim.key.client]?.claimBytes -= claim.bytes
        if let index = state.queue.firstIndex(where: { $0 === claim }) { state.queue.remove(at: index) }
        for token in claim.awaiting.keys { state.tokens[token]?.claim = nil }
        claim.awaiting.removeAll()
        claim.remaining.removeAll()
        for (presenter, token) in claim.reacquirers where state.presenters[presenter] != nil {
            state.emit(to: presenter.client, .presenter(presenter.presenter, .reacquire(token: token), token: nil))
        }
        claim.reacquirers.removeAll()
        if !state.programOpens.isEmpty { admitProgramOpens(&state) }
    }
}
