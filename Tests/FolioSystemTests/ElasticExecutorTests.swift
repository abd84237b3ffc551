@testable import FolioTestTraits
import Foundation
import Testing

/// The executor the tests run on: a job never waits behind another's blocking wait.
@Suite("The tests' elastic executor", .elasticPool)
struct ElasticExecutorTests {
    /// Jobs enqueued together while one thread is idle each get a thread: the light one runs at
    /// once though the other blocks (before, both were handed the one idle thread, and the light
    /// job waited for the blocking one to end).
    @Test func jobsEnqueuedTogetherDoNotShareAnIdleThread() async throws {
        let executor = ElasticExecutor()
        for round in 0..<4 {
            // One idle thread: a job that ran on it and ended.
            await Task(executorPreference: executor) {}.value
            let start = ContinuousClock.now
            let blocker = Task(executorPreference: executor) { usleep(1_500_000) }
            let light = Task(executorPreference: executor) { ContinuousClock.now }
            let ran = await light.value
            #expect(ran - start < .seconds(1), "round \(round): the light job waited \(ran - start)")
            _ = await blocker.value
        }
    }
}
