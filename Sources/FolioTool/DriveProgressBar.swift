import Folio
import Foundation

/// The bar `folio drive sync` and `folio drive download` show on a terminal while the drive works:
/// the items done of those planned and the bytes moved, read five times a second from the daemon
/// (`drive.progress`) or from the drive of this process, and once more when the work ends (the
/// pass that ended, however short). Off a terminal it shows a line at each tenth when asked to
/// (`download`), else nothing (`sync`, whose summary says what was done).
final class DriveProgressBar: @unchecked Sendable {
    /// What the bar follows: the pass under way, and the last one that ended.
    typealias Source = @Sendable () async -> (running: DriveProgressReply.Pass?, last: DriveProgressReply.Pass?)?

    private let lock = NSLock()
    private var pass: DriveProgressReply.Pass?
    private var finished = false

    /// Runs `work` while a bar labelled `label` follows what `source` says.
    static func showing<T, Failure: Error>(
        _ label: String, offTerminal: Bool = false, source: @escaping Source, _ work: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let bar = DriveProgressBar()
        let poller = Task {
            while !Task.isCancelled {
                if let running = await source()?.running { bar.lock.withLock { bar.pass = running } }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        let reporter = ProgressReporter(label: label, offTerminal: offTerminal) { bar.read() }.start()
        do throws(Failure) {
            let result = try await work()
            poller.cancel()
            // The pass this work ran has ended: the bar ends as it ended.
            let last = await source()?.last
            bar.lock.withLock {
                if let last { bar.pass = last }
                bar.finished = bar.pass != nil
            }
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

    /// The daemon's passes, or nil when it cannot be asked.
    static func daemon(_ daemon: DaemonCoordinationEngine) -> Source {
        {
            guard let reply = try? await daemon.send(DriveProgressRequest(), deadline: .after(.seconds(5))) else { return nil }
            return (reply.pass, reply.last)
        }
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
