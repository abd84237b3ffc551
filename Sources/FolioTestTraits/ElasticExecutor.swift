import Foundation

/// A task executor whose threads grow with demand: a job never waits behind a thread blocked in a
/// process wait or a poll, because a job that finds no idle thread gets a new one. Threads idle for
/// five seconds end.
///
/// Swift's own global pool has one thread per core (two on CI's machines) and never grows, so there
/// two tests blocked in synchronous waits stall every other task of the test process.
final class ElasticExecutor: TaskExecutor, @unchecked Sendable {
    /// The one executor the tests share.
    static let shared = ElasticExecutor()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    /// Threads waiting for a job that no enqueue has claimed yet.
    private var idle = 0
    /// Wake-ups claimed by enqueues and not yet taken by a waking thread. Each job claims a thread of
    /// its own: two jobs enqueued before a signalled thread wakes must not share it, or the second
    /// waits until the first (a test blocked in a process wait, say) ends.
    private var claimed = 0

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let wakeIdle = idle > 0
        if wakeIdle {
            idle -= 1
            claimed += 1
            condition.signal()
        }
        condition.unlock()
        guard !wakeIdle else { return }
        let thread = Thread { [self] in work() }
        // Test bodies and their helpers run here: a stack as large as a main thread's.
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func work() {
        condition.lock()
        while true {
            if head < jobs.count {
                let job = jobs[head]
                head += 1
                if head > 1024, head * 2 > jobs.count {
                    jobs.removeFirst(head)
                    head = 0
                }
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
                condition.lock()
                continue
            }
            idle += 1
            let signalled = condition.wait(until: Date().addingTimeInterval(5))
            // Woken for a claim (whoever was signalled, one waking thread takes it), or by the
            // timeout or spuriously, still counted idle.
            if claimed > 0 { claimed -= 1 } else { idle -= 1 }
            if !signalled, head >= jobs.count {
                condition.unlock()
                return
            }
        }
    }
}
