extension CoordinationArbiter {
    /// The lock table, waiters and presenters, for `folio status` (debugging stuck claims).
    package func status() -> WireValue {
        perform { state in
            let now = ContinuousClock.now
            func milliseconds(_ since: ContinuousClock.Instant) -> WireValue {
                let elapsed = now - since
                return .int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            }
            func client(_ number: UInt32) -> WireValue {
                let record = state.clients[number]
                return ["client": .int(Int64(number)), "pid": .int(Int64(record?.pid ?? 0)), "name": .string(record?.name ?? "?")]
            }
            let claims: [WireValue] = state.queue.map { claim in
                var value: [String: WireValue] = [
                    "claim": .int(Int64(claim.key.claim)), "owner": client(claim.key.client), "purpose": .string(claim.purpose),
                    "state": .string(claim.phase.rawValue), "age_ms": milliseconds(claim.submittedAt),
                    "items": .array(claim.items.map { CoordinationWire.value(of: ClaimItem(path: $0.path, access: $0.access)) }),
                ]
                if let grantedAt = claim.grantedAt { value["held_ms"] = milliseconds(grantedAt) }
                let awaiting: [WireValue] = claim.awaiting.keys.sorted().compactMap { token in
                    guard let record = state.tokens[token] else { return nil }
                    return [
                        "presenter": .int(Int64(record.presenter.presenter)), "owner": client(record.presenter.client),
                        "message": .string("\(record.message)"), "waiting_ms": milliseconds(record.sentAt),
                    ]
                }
                if !awaiting.isEmpty { value["awaiting"] = .array(awaiting) }
                return .object(value)
            }
            let presenters: [WireValue] = state.presenters.sorted { ($0.key.client, $0.key.presenter) < ($1.key.client, $1.key.presenter) }
                .map { key, record in
                    [
                        "presenter": .int(Int64(key.presenter)), "owner": client(key.client),
                        "path": record.path.map { .string($0) } ?? .null,
                    ]
                }
            let clients: [WireValue] = state.clients.keys.sorted().map { client($0) }
            return ["claims": .array(claims), "presenters": .array(presenters), "clients": .array(clients)]
        }
    }
}
