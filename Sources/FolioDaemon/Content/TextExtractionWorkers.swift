import Foundation
import Synchronization

/// Text extraction workers side by side (``TextExtractionWorker``, one per processor up to
/// `count`): a batch of files is cut into as many runs, each read by its own worker on its own
/// queue, so one worker reads a file while another's text travels back and a two-processor
/// machine is not left half idle. Blocking: call it from a queue or pool made for blocking work.
package final class TextExtractionWorkers: Sendable {
    private let workers: [TextExtractionWorker]
    private let queues: [DispatchQueue]

    /// - Parameters:
    ///   - executable: the `folio` executable (the workers are its `extract-worker` command).
    ///   - count: how many workers at most (no more than the processors).
    package init(executable: String, count: Int = 2, timeLimit: Duration = .seconds(10), memoryLimit: Int = 2 << 30) {
        let count = max(1, min(count, ProcessInfo.processInfo.activeProcessorCount))
        workers = (0..<count).map { _ in TextExtractionWorker(executable: executable, timeLimit: timeLimit, memoryLimit: memoryLimit) }
        queues = (0..<count).map { DispatchQueue(label: "folio.index.extract.\($0)") }
    }

    /// The texts of `files`, in their order; nil for a file not read (it followed, in its run, a
    /// file that timed out or crashed its worker: it waits for the next batch).
    package func texts(of files: [(path: String, format: TextExtractor.Format)]) -> [Result<String, TextExtractionWorker.Failure>?] {
        let runs = min(workers.count, files.count)
        guard runs > 1 else { return files.isEmpty ? [] : Self.aligned(workers[0].texts(of: files), count: files.count) }
        let size = (files.count + runs - 1) / runs
        let results = Mutex<[Int: [Result<String, TextExtractionWorker.Failure>?]]>([:])
        let group = DispatchGroup()
        for run in 0..<runs {
            let start = run * size
            let slice = Array(files[start..<min(start + size, files.count)])
            queues[run].async(group: group) { [workers] in
                let texts = Self.aligned(workers[run].texts(of: slice), count: slice.count)
                results.withLock { $0[run] = texts }
            }
        }
        // Each file has the worker's time limit: the runs end by themselves. The wait's deadline
        // is a backstop only.
        let limit = workers[0].timeLimit * (size + 1)
        _ = group.wait(timeout: .now() + .seconds(Int(limit.components.seconds) + 1))
        let collected = results.withLock { $0 }
        return (0..<runs).flatMap { run in collected[run] ?? Array(repeating: nil, count: min(size, files.count - run * size)) }
    }

    /// Stops every worker (the next batch starts new ones).
    package func stop() {
        for (worker, queue) in zip(workers, queues) { queue.sync { worker.stop() } }
    }

    private static func aligned(_ results: [Result<String, TextExtractionWorker.Failure>], count: Int) -> [Result<String, TextExtractionWorker.Failure>?] {
        results.map { $0 } + Array(repeating: nil, count: max(0, count - results.count))
    }
}
