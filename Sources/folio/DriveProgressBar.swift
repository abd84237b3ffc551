import Folio
import Foundation

/// The bar `folio drive sync` and `folio drive download` show on a terminal while the drive works:
/// the items done of those planned and the bytes moved, read five times a second from the daemon
/// (`drive.progress`) or from the drive of this process. Off a terminal it shows nothing (the
/// command's summary says what was done).
final class DriveProgressBar: @unchecked Sendable {
    private let lock = NSLock()
    private var pass: DriveProgressReply.Pass?
    private var finished = false

    /// Runs `work` while a bar labelled `label` follows what `source` says.
    static func showing<T, Failure: Error>(
        _ label: String, source: @escaping @Sendable () async -> DriveProgressReply.Pass?, _ work: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let bar = DriveProgressBar()
        let poller = Task {
            while !Task.isCancelled {
                if let pass = await source() { bar.lock.withLock { bar.pass = pass } }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        let reporter = ProgressReporter(label: label, offTerminal: false) { bar.read() }.start()
        do throws(Failure) {
            let result = try await work()
            bar.lock.withLock { bar.finished = true }
            poller.cancel()
            reporter.cancel()
            await reporter.value
            return result
        } catch {
            poller.cancel()
            reporter.cancel()
            await reporter.value
            throw error
        }
    }

    /// The daemon's pass, or nil when it cannot be asked.
    static func daemonPass(_ daemon: DaemonCoordinationEngine) -> @Sendable () async -> DriveProgressReply.Pass? {
        { try? await daemon.send(DriveProgressRequest(), deadline: .after(.seconds(5))).pass }
    }

    /// The fraction done (of the bytes when the work moves any, else of the items) and
    /// `12 of 40 items, 3.1 MB of 7.2 MB`.
    private func read() -> (fraction: Double, detail: String)? {
        lock.withLock {
            guard var pass, pass.actions > 0 else { return nil }
            if finished {
                pass.done = pass.actions
                pass.bytesDone = pass.bytes
            }
            var fraction = Double(pass.done) / Double(pass.actions)
            var detail = "\(pass.done) of \(pass.actions) items"
            if pass.bytes > 0 {
                fraction = Double(pass.bytesDone) / Double(pass.bytes)
                detail += ", \(ProgressReporter.bytes(pass.bytesDone)) of \(ProgressReporter.bytes(pass.bytes))"
            }
            return (min(1, fraction), detail)
        }
    }
}
