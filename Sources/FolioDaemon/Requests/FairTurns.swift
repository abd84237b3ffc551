import NIOCore
import Synchronization

/// Connections of one event loop that handled their share of frames and wait for their next
/// turn. They resume together, a round at a time, each round scheduled a moment after the last
/// ended: between rounds the loop goes back to its sockets, so a new client's hello is read and
/// answered whatever the others keep sending. (Resuming each connection with `execute` would
/// not: an event loop runs its tasks until none is left before it looks at its sockets again.)
final class FairTurns: @unchecked Sendable {
    /// The pause between rounds, in which the loop serves its sockets.
    static let pause = TimeAmount.microseconds(200)

    private let loop: any EventLoop
    private var waiting: [() -> Void] = []
    private var scheduled = false

    private init(loop: any EventLoop) { self.loop = loop }

    private static let all = Mutex<[ObjectIdentifier: FairTurns]>([:])

    /// The turns of `loop`.
    static func of(_ loop: any EventLoop) -> FairTurns {
        all.withLock { all in
            if let turns = all[ObjectIdentifier(loop)] { return turns }
            let turns = FairTurns(loop: loop)
            all[ObjectIdentifier(loop)] = turns
            return turns
        }
    }

    /// Queues `resume` for the next round (on the loop's thread only).
    func wait(_ resume: @escaping () -> Void) {
        loop.preconditionInEventLoop()
        waiting.append(resume)
        guard !scheduled else { return }
        scheduled = true
        loop.scheduleTask(in: Self.pause) { self.round() }
    }

    /// Runs the connections waiting now; those that wait again go to a round scheduled only once
    /// this one has ended, so that the pause really comes between rounds.
    private func round() {
        let turn = waiting
        waiting = []
        for resume in turn { resume() }
        guard !waiting.isEmpty else {
            scheduled = false
            return
        }
        loop.scheduleTask(in: Self.pause) { self.round() }
    }
}
