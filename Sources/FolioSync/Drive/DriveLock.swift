#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import Synchronization

/// An exclusive lock on a file for one sync pass: a second pass (of this process or another)
/// waits for the first. Within a process the users take turns, first come first served, and a
/// release hands the lock to the next at once (a program's open waiting on a download is not kept
/// waiting for a poll); between processes the file lock is polled.
struct DriveLock {
    let descriptor: Int32
    let path: String

    /// Takes the lock, waiting as long as another holds it. The wait between processes polls
    /// (every 50 ms) rather than blocking in `flock`: a thread of the cooperative pool held for a
    /// whole pass would stall the daemon's other work, and a cancelled wait ends.
    static func acquire(_ path: String) async throws -> DriveLock {
        try await Turns.shared.take(path)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            Turns.shared.give(path)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(descriptor)
                Turns.shared.give(path)
                throw CocoaError(.fileLocking, userInfo: [NSFilePathErrorKey: path])
            }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                close(descriptor)
                Turns.shared.give(path)
                throw error
            }
        }
        return DriveLock(descriptor: descriptor, path: path)
    }

    func release() {
        close(descriptor)
        Turns.shared.give(path)
    }

    /// How many of this process's users wait for their turn at the lock file `path`.
    static func waiting(at path: String) -> Int { Turns.shared.waiting(path) }

    /// This process's users of each lock file, in turn.
    private final class Turns: Sendable {
        static let shared = Turns()

        private struct Queue {
            var waiting: [(number: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        }

        /// The lock files held in this process, with who waits for each; the next waiter number.
        private let state = Mutex<(queues: [String: Queue], next: UInt64)>(([:], 0))

        /// Waits for this process's turn at `path`. A cancelled wait throws `CancellationError`.
        func take(_ path: String) async throws {
            let number = state.withLock { state -> UInt64 in
                state.next += 1
                return state.next
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let turn = state.withLock { state -> Bool? in
                        guard !Task.isCancelled else { return nil }
                        guard var queue = state.queues[path] else {
                            state.queues[path] = Queue()
                            return true
                        }
                        queue.waiting.append((number, continuation))
                        state.queues[path] = queue
                        return false
                    }
                    switch turn {
                    case true?: continuation.resume()
                    case nil: continuation.resume(throwing: CancellationError())
                    case false?: break
                    }
                }
            } onCancel: {
                let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let index = state.queues[path]?.waiting.firstIndex(where: { $0.number == number }) else { return nil }
                    return state.queues[path]?.waiting.remove(at: index).continuation
                }
                cancelled?.resume(throwing: CancellationError())
            }
        }

        func waiting(_ path: String) -> Int { state.withLock { $0.queues[path]?.waiting.count ?? 0 } }

        /// Ends this process's turn at `path`: the next waiter's begins.
        func give(_ path: String) {
            let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard var queue = state.queues[path] else { return nil }
                guard !queue.waiting.isEmpty else {
                    state.queues[path] = nil
                    return nil
                }
                let next = queue.waiting.removeFirst().continuation
                state.queues[path] = queue
                return next
            }
            next?.resume()
        }
    }
}
