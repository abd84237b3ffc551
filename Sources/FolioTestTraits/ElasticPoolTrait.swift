public import Testing

/// Runs each test of the suite (and of the suites inside it) on threads that grow with demand, not
/// on Swift's cooperative pool: tests that block in process waits, server starts and polls then
/// hold back no other test. Under a whole-suite run on a two-core machine, two such tests used to
/// stall every other task of the process past its requests' timeouts.
public struct ElasticPoolTrait: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test below the suite.
    public var isRecursive: Bool { true }

    /// Runs `function` with the elastic executor as its task executor preference (its child tasks
    /// and the unstructured tasks it starts follow it).
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(ElasticExecutor.shared) { try await function() }
    }
}

extension Trait where Self == ElasticPoolTrait {
    /// The suite's tests run on threads that grow with demand (see ``ElasticPoolTrait``).
    public static var elasticPool: Self { ElasticPoolTrait() }
}
