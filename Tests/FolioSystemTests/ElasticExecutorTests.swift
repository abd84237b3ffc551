@testable import FolioTestTraits
import Foundation
import Synchronization
import Testing

/// The executor the tests run on: a job never waits behind another's blocking wait.
@Suite("The tests' elastic executor", .elasticPool)
struct ElasticExecutorTests {
    /// Jobs enqueued together while one thread is idle each get a thread: the light one runs
    /// while the other still blocks (before, both were handed the one idle thread, and the light
    /// job waited for the blocking one to end). Whether the blocker had ended when the light job
    /// ran is what is asserted, not a time: the suite's stall watchdog may stop the whole process
    /// under gdb for a moment, which delays both alike.
    @Test func jobsEnqueuedTogetherDoNotShareAnIdleThread() async throws {
        let executor = ElasticExecutor()
        for round in 0..<4 {
            // One idle thread: a job that ran on it and ended.
            await Task(executorPreference: executor) {}.value
            let blockerEnded = Flag()
            let blocker = Task(executorPreference: executor) {
                usleep(1_500_000)
                blockerEnded.value.store(true, ordering: .sequentiallyConsistent)
            }
            let light = Task(executorPreference: executor) { blockerEnded.value.load(ordering: .sequentiallyConsistent) }
            let ranAfterTheBlocker = await light.value
            #expect(!ranAfterTheBlocker, "round \(round): the light job waited for the blocking one to end")
            _ = await blocker.value
        }
    }
}

/// A flag the tasks of a round share.
private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}
