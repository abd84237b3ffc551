import Synchronization

/// A fetched file as it arrives: where it is written and how many of its bytes are there, for a
/// reader that does not wait for the whole of it (a program reading a drive file through the
/// mount). The provider writing the file reports (``wrote(_:to:)``); the one that asked for it
/// ends it (``end(failed:)``) whatever the outcome. A provider that cannot report leaves it empty: the
/// reader then waits for the whole file.
package final class ArrivingContents: Sendable {
    private struct State {
        var path: String?
        var written: Int64 = 0
        var ended = false
        var failed = false
        var waiters: [(needed: Int64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Where the file is written, how many of its bytes are written so far, whether the writing
    /// ended, and whether it failed (the file is then incomplete).
    package var now: (path: String?, written: Int64, ended: Bool, failed: Bool) {
        state.withLock { ($0.path, $0.written, $0.ended, $0.failed) }
    }

    /// The writer: the first `written` bytes of the file at `path` are in it.
    package func wrote(_ written: Int64, to path: String) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.path = path
            state.written = max(state.written, written)
            let ready = state.waiters.filter { $0.needed <= state.written }.map(\.continuation)
            state.waiters.removeAll { $0.needed <= state.written }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// The writing ended, whole or `failed` (or cancelled): every wait ends.
    package func end(failed: Bool) {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ended = true
            state.failed = failed
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Waits until `count` bytes are written or the writing ended; then ``now``.
    package func wait(for count: Int64) async -> (path: String?, written: Int64, ended: Bool, failed: Bool) {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.written < count, !state.ended else { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
        return now
    }
}
