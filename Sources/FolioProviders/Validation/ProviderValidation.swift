public import Folio
public import Foundation

/// The conformance suite for providers (Apple's FileProviderValidation, done openly): it creates a
/// scratch folder in the provider's root, runs every case against the provider's calls, reports each
/// as it ends, and deletes the scratch folder.
public struct ProviderValidation: Sendable {
    /// What a run covers.
    public struct Options: Sendable {
        /// The size of the streamed large file (the "multi-GB" needs a size given on the command line).
        public var largeFileSize: Int64 = 64 << 20
        /// How many files the paging case creates in one folder.
        public var pagingItems = 120
        /// Only the cases whose names contain one of these (all when empty).
        public var only: [String] = []

        /// The defaults.
        public init() {}
    }

    /// One case's outcome.
    public struct Outcome: Sendable {
        /// The case's name.
        public var name: String
        /// Why it failed; nil when it passed.
        public var failure: String?
        /// How long it took.
        public var duration: Duration
        /// Whether it passed.
        public var passed: Bool { failure == nil }
    }

    let provider: any FileProvider
    let temporaryDirectory: URL
    let options: Options

    /// A suite for `provider`; fetched contents go to `temporaryDirectory` (on the volume the provider
    /// expects).
    public init(provider: any FileProvider, temporaryDirectory: URL, options: Options = Options()) {
        self.provider = provider
        self.temporaryDirectory = temporaryDirectory
        self.options = options
    }

    /// The names of the cases, in the order they run.
    public static var caseNames: [String] { cases.map(\.name) }

    /// Runs the cases; `report` gets each outcome as it ends.
    public func run(report: @Sendable (Outcome) -> Void = { _ in }) async -> [Outcome] {
        var outcomes: [Outcome] = []
        let clock = ContinuousClock()
        let context: ValidationContext
        do {
            context = try await ValidationContext.make(provider: provider, temporaryDirectory: temporaryDirectory, options: options)
        } catch {
            let outcome = Outcome(name: "list the root and set up a scratch folder", failure: "\(error)", duration: .zero)
            report(outcome)
            return [outcome]
        }
        for validationCase in Self.cases
        where options.only.isEmpty || options.only.contains(where: { validationCase.name.localizedCaseInsensitiveContains($0) }) {
            let start = clock.now
            var failure: String?
            do {
                try await validationCase.body(context)
            } catch let error as ValidationFailure {
                failure = error.message
            } catch {
                failure = "unexpected error: \(error)"
            }
            let outcome = Outcome(name: validationCase.name, failure: failure, duration: clock.now - start)
            outcomes.append(outcome)
            report(outcome)
        }
        await context.cleanUp()
        return outcomes
    }

    struct Case: Sendable {
        var name: String
        var body: @Sendable (ValidationContext) async throws -> Void
    }

    static let cases: [Case] = itemCases + contentCases + enumerationCases + nameCases + concurrencyCases
}

/// A case's failure, in words.
struct ValidationFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
