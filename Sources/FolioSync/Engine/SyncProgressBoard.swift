import Foundation

/// What a drive's passes and downloads are doing now, for people: the pass's actions done of
/// those planned, and each transfer under way with how far it is. The engine writes it as it
/// works; readers take a ``Snapshot`` when they show it (the daemon forwards the transfers to its
/// index, `folio drive sync` draws a bar), so a pass of ten thousand files tells nobody anything
/// per file.
package final class SyncProgressBoard: @unchecked Sendable {
    /// Which way a transfer goes.
    package enum Direction: String, Sendable {
        case upload, download
    }

    /// The board as it stands.
    package struct Snapshot: Sendable, Equatable {
        /// The pass under way: its actions planned and done, and the bytes of its transfers
        /// planned and done, a download's as they arrive (nil between passes).
        package var pass: Pass?
        /// The last pass that ended, as it ended (nil before any).
        package var last: Pass?
        /// The transfers under way, by drive path.
        package var transfers: [String: Transfer]

        package struct Pass: Sendable, Equatable {
            package var actions: Int
            package var done: Int
            package var bytes: Int64
            package var bytesDone: Int64
        }

        /// A transfer: its direction, and the fraction done (0…1; an upload's is 0 until it is
        /// sent whole: providers report no progress of a write).
        package struct Transfer: Sendable, Equatable {
            package var direction: Direction
            package var fraction: Double

            /// The fraction as a percentage, to a tenth.
            package var percent: Double { (fraction * 1000).rounded() / 10 }
        }
    }

    private struct Running {
        var direction: Direction
        var size: Int64
        /// The download's progress (bytes), read when a snapshot is taken.
        var progress: Progress?
    }

    private let lock = NSLock()
    private var pass: Snapshot.Pass?
    private var last: Snapshot.Pass?
    private var running: [SyncPath: Running] = [:]

    init() {}

    /// A pass begins with `actions` planned, whose transfers move `bytes`.
    func beginPass(actions: Int, bytes: Int64) {
        lock.withLock { pass = Snapshot.Pass(actions: actions, done: 0, bytes: bytes, bytesDone: 0) }
    }

    /// One of the pass's actions ended (done or deferred), having moved `bytes`.
    func actionEnded(bytes: Int64) {
        lock.withLock {
            pass?.done += 1
            pass?.bytesDone += bytes
        }
    }

    /// The pass ended.
    func endPass() {
        lock.withLock {
            if let pass { last = pass }
            pass = nil
        }
    }

    /// A transfer of `path` began: `size` bytes `direction`, a download reporting to `progress`.
    func began(_ path: SyncPath, _ direction: Direction, size: Int64, progress: Progress? = nil) {
        lock.withLock { running[path] = Running(direction: direction, size: size, progress: progress) }
    }

    /// The transfer of `path` ended (whichever way).
    func ended(_ path: SyncPath) {
        lock.withLock { running[path] = nil }
    }

    /// The board now.
    package func snapshot() -> Snapshot {
        lock.withLock {
            var transfers: [String: Snapshot.Transfer] = [:]
            var arriving: Int64 = 0
            for (path, transfer) in running {
                var fraction = 0.0
                if let progress = transfer.progress, transfer.size > 0 {
                    let done = min(transfer.size, max(0, progress.completedUnitCount))
                    arriving += done
                    fraction = Double(done) / Double(transfer.size)
                }
                transfers[path.text] = Snapshot.Transfer(direction: transfer.direction, fraction: fraction)
            }
            var now = pass
            if let pass { now?.bytesDone = min(pass.bytes, pass.bytesDone + arriving) }
            return Snapshot(pass: now, last: last, transfers: transfers)
        }
    }
}
