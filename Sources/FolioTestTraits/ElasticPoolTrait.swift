public import Testing
import Foundation
import FolioTesting

/// Runs each test of the suite (and of the suites inside it) on threads that grow with demand, not
/// on Swift's cooperative pool: tests that block in process waits, server starts and polls then
/// hold back no other test. Under a whole-suite run on a two-core machine, two such tests used to
/// stall every other task of the process past its requests' timeouts.
///
/// The preference reaches the test's body and its structured child tasks (`async let`, task
/// groups) only. Unstructured tasks (`Task { }`, `Task.detached { }`) do not inherit it (SE-0417):
/// they run on the cooperative pool, where nothing may block — a test that needs a blocking helper
/// task gives it the preference itself (`Task(executorPreference: ElasticPoolTrait.executor)`).
///
/// The trait also starts the process's `StallWatchdog` and, at the end of each test, reports the
/// stalls of the shared pools seen while it ran (as issues when `FOLIO_STALLS_FAIL=1`).
public struct ElasticPoolTrait: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test below the suite.
    public var isRecursive: Bool { true }

    /// The executor the tests run on, for a test's own unstructured tasks that must block.
    public static var executor: any TaskExecutor { ElasticExecutor.shared }

    /// Runs `function` with the elastic executor as its task executor preference, watching the
    /// shared pools meanwhile.
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let watchdog = StallWatchdog.shared
        watchdog.start()
        let mark = watchdog.count
        defer {
            let stalls = watchdog.stalls(since: mark)
            if !stalls.isEmpty, ProcessInfo.processInfo.environment["FOLIO_STALLS_FAIL"] == "1" {
                for stall in stalls { Issue.record("\(stall)") }
            }
        }
        try await withTaskExecutorPreference(ElasticExecutor.shared) { try await function() }
    }
}

extension Trait where Self == ElasticPoolTrait {
    /// The suite's tests run on threads that grow with demand (see ``ElasticPoolTrait``).
    public static var elasticPool: Self { ElasticPoolTrait() }
}
