package import Foundation

/// Why a path was not synced, as the journal keeps it between passes. An action that fails pass
/// after pass (a name the server refuses, a folder it will not move even the simple way) is set
/// aside after a few tries: later passes leave it, and its error stays visible, until the wait
/// ends, the item changes on either side (another action), or the user asks for a pass (`folio
/// drive sync`), so one item never costs every pass its requests.
package struct SyncFailure: Equatable, Sendable {
    /// The error, for people.
    package var reason: String
    /// How many passes in a row tried the same action and failed.
    package var attempts: Int
    /// A digest of the refused action and of the local item then (empty for a transient failure).
    package var action: String
    /// Until when passes leave the path aside (nil: the next pass tries it again).
    package var retryAfter: Date?

    /// The attempt from which a failing action is set aside.
    static let setAsideAfter = 3

    /// How long a path that failed `attempts` times is left aside: nothing before the
    /// ``setAsideAfter``th attempt, then a minute, doubled at each attempt, at most an hour.
    static func setAsideWait(_ attempts: Int) -> TimeInterval? {
        guard attempts >= setAsideAfter else { return nil }
        return min(60 * pow(2, Double(min(attempts - setAsideAfter, 10))), 3600)
    }

    /// Whether a pass at `now` leaves the path aside when it plans the action with digest `action`.
    func setsAside(_ action: String, now: Date) -> Bool {
        guard let retryAfter, retryAfter > now else { return false }
        return action == self.action
    }

    /// The reason, with how long the path is set aside (for reports and `folio drive status`).
    package var description: String {
        guard let retryAfter else { return reason }
        let time = ISO8601DateFormatter.string(from: retryAfter, timeZone: .current, formatOptions: [.withTime, .withColonSeparatorInTime])
        return "\(reason) (set aside after \(attempts) tries: tried again at \(time), when it changes, or by folio drive sync)"
    }
}
