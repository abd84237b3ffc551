import Foundation

extension CoordinationArbiter {
    /// The most a status reply holds, serialized: well inside the wire's 1 MiB frame, whatever the
    /// state (256 claims of 256 items of 4 KiB paths are legal).
    static let statusBudget = 512 << 10
    /// The items shown of one claim (`items_total` says how many it has when there are more).
    static let statusItemsPerClaim = 16

    /// The lock table, waiters, presenters and programs' opens waiting on writes, for `folio status` (debugging stuck claims). For an
    /// app (`visibleTo`: its client number) only its own client, claims and presenters, and of the
    /// messages its claims wait on, not whose presenters they went to, and no programs' opens. What does not fit in
    /// `statusBudget` bytes is left out and counted in `omitted`.
    package func status(visibleTo viewer: UInt32? = nil) -> WireValue {
        perform { state in
            let now = ContinuousClock.now
            var budget = Self.statusBudget
            var omitted: [String: Int] = [:]
            func admit(_ value: WireValue, _ list: String, into values: inout [WireValue]) {
                let size = value.serializedCount + 1
                guard size <= budget else {
                    omitted[list, default: 0] += 1
                    return
                }
                budget -= size
                values.append(value)
            }
            func visible(_ client: UInt32) -> Bool { viewer == nil || viewer == client }
            func milliseconds(_ since: ContinuousClock.Instant) -> WireValue {
                let elapsed = now - since
                return .int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            }
            func client(_ number: UInt32) -> WireValue {
                let record = state.clients[number]
                var value: [String: WireValue] = ["client": .int(Int64(number)), "pid": .int(Int64(record?.pid ?? 0)), "name": .string(record?.name ?? "?")]
                // The arbiter's own process (the daemon's coordinations: the index, the drive).
                if record?.pid == getpid() { value["own"] = true }
                return .object(value)
            }
            var clients: [WireValue] = []
            for number in state.clients.keys.sorted() where visible(number) { admit(client(number), "clients", into: &clients) }
            var claims: [WireValue] = []
            for claim in state.queue where visible(claim.key.client) {
                var value: [String: WireValue] = [
                    "claim": .int(Int64(claim.key.claim)), "owner": client(claim.key.client), "purpose": .string(claim.purpose),
                    "state": .string(claim.phase.rawValue), "age_ms": milliseconds(claim.submittedAt),
                    "items": .array(claim.items.prefix(Self.statusItemsPerClaim).map { CoordinationWire.value(of: ClaimItem(path: $0.path, access: $0.access)) }),
                ]
                if claim.items.count > Self.statusItemsPerClaim { value["items_total"] = .int(Int64(claim.items.count)) }
                if let grantedAt = claim.grantedAt { value["held_ms"] = milliseconds(grantedAt) }
                let awaiting: [WireValue] = claim.awaiting.keys.sorted().compactMap { token in
                    guard let record = state.tokens[token] else { return nil }
                    var waiting: [String: WireValue] = ["message": .string("\(record.message)"), "waiting_ms": milliseconds(record.sentAt)]
                    if visible(record.presenter.client) {
                        waiting["presenter"] = .int(Int64(record.presenter.presenter))
                        waiting["owner"] = client(record.presenter.client)
                    }
                    return .object(waiting)
                }
                if !awaiting.isEmpty { value["awaiting"] = .array(awaiting) }
                admit(.object(value), "claims", into: &claims)
            }
            var presenters: [WireValue] = []
            for (key, record) in state.presenters.sorted(by: { ($0.key.client, $0.key.presenter) < ($1.key.client, $1.key.presenter) })
            where visible(key.client) {
                let value: WireValue = [
                    "presenter": .int(Int64(key.presenter)), "owner": client(key.client), "path": record.path.map { .string($0) } ?? .null,
                ]
                admit(value, "presenters", into: &presenters)
            }
            var status: [String: WireValue] = ["claims": .array(claims), "presenters": .array(presenters), "clients": .array(clients)]
            if viewer == nil {
                // Programs' opens through the drive's mount waiting for coordinated writes.
                var opens: [WireValue] = []
                for (_, open) in state.programOpens.sorted(by: { $0.key < $1.key }) {
                    admit(["path": .string(open.item.path), "pid": .int(Int64(open.process)), "waiting_ms": milliseconds(open.since)], "opens", into: &opens)
                }
                status["opens"] = .array(opens)
            }
            if !omitted.isEmpty { status["omitted"] = .object(omitted.mapValues { .int(Int64($0)) }) }
            return .object(status)
        }
    }
}
