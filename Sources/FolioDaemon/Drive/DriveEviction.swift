import Folio
import FolioSync
import Foundation
import NIOPosix
import Synchronization

extension DaemonContext {
    /// How long one item's eviction may take inside its claim (a rename and a journal entry).
    static let evictionLimit = Duration.seconds(600)

    /// Evicts the drive items at `relative` (drive paths), each inside a coordinated eviction on
    /// the daemon's own engine: the item's presenters in every process are asked to accommodate
    /// it first (a document closes), and one that refuses, or that cannot (a presenter without
    /// `accommodatePresentedItemEviction`), keeps the item downloaded — as on Apple's systems.
    func evictCoordinated(_ relative: [String], drive: DriveSync, driveDirectory: String) async throws
        -> (evicted: [String], refused: [(String, FileProviderError)])
    {
        var evicted: [String] = [], refused: [(String, FileProviderError)] = []
        for path in relative {
            let url = URL(fileURLWithPath: path.isEmpty ? driveDirectory : driveDirectory + "/" + path)
            let engine = access.coordination
            let run = { @Sendable () -> (NSError?, Result<(evicted: [String], refused: [(String, FileProviderError)]), any Error>?) in
                var error: NSError?
                let outcome = EvictionOutcome()
                FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: url, options: .forEvicting, error: &error) { _ in
                    // The eviction is async; this thread is the blocking pool's, made to wait.
                    let done = DispatchSemaphore(value: 0)
                    Task {
                        let result: Result<(evicted: [String], refused: [(String, FileProviderError)]), any Error>
                        do { result = .success(try await drive.evict([path])) } catch { result = .failure(error) }
                        outcome.set(result)
                        done.signal()
                    }
                    if done.wait(timeout: .now() + .seconds(Int(Self.evictionLimit.components.seconds))) == .timedOut {
                        outcome.set(.failure(FileProviderError(.nonEvictable, message: "“\(path)”: the eviction took longer than \(Self.evictionLimit)")))
                    }
                }
                return (error, outcome.value)
            }
            let (refusal, outcome): (NSError?, Result<(evicted: [String], refused: [(String, FileProviderError)]), any Error>?)
            if let pool = pools.pool(for: .slow) {
                (refusal, outcome) = try await pool.runIfActive(run)
            } else {
                (refusal, outcome) = run()
            }
            if let refusal {
                refused.append((path, FileProviderError(.nonEvictable, message: "“\(path)” is presented by an app that did not let it go: \(refusal.localizedDescription)")))
                continue
            }
            guard let outcome else { continue }
            let (done, notDone) = try outcome.get()
            evicted += done
            refused += notDone
        }
        return (evicted, refused)
    }
}

/// One eviction's result, set by the task that ran it (or by the deadline), read by the waiter.
private final class EvictionOutcome: Sendable {
    private let result = Mutex<Result<(evicted: [String], refused: [(String, FileProviderError)]), any Error>?>(nil)
    var value: Result<(evicted: [String], refused: [(String, FileProviderError)]), any Error>? { result.withLock { $0 } }
    /// The first result set stays (a late one after the deadline is dropped).
    func set(_ value: Result<(evicted: [String], refused: [(String, FileProviderError)]), any Error>) {
        result.withLock { if $0 == nil { $0 = value } }
    }
}
