import Foundation
package import Logging

/// Coordination within this process: an arbiter of its own, used when no daemon runs (or when
/// `FOLIO_COORDINATION=local`). Same semantics as the daemon; it simply cannot see other processes.
package final class LocalCoordinationEngine: CoordinationEngine, @unchecked Sendable {
    package let arbiter: CoordinationArbiter
    private var client: UInt32 = 0

    /// Creates an engine with its own arbiter.
    package convenience init(configuration: CoordinationArbiter.Configuration = .fromEnvironment(), logger: Logger = Logger(label: "folio.coordination")) {
        self.init(arbiter: CoordinationArbiter(configuration: configuration, logger: logger), logger: logger)
    }

    /// Creates an engine that is one more client of `arbiter` (the daemon's own coordinations,
    /// which every connected process's presenters hear of).
    package init(arbiter: CoordinationArbiter, logger: Logger = Logger(label: "folio.coordination")) {
        self.arbiter = arbiter
        super.init(logger: logger)
        client = arbiter.addClient(Sink(engine: self), pid: getpid(), name: ProcessInfo.processInfo.processName)
    }

    private final class Sink: ArbiterClient, @unchecked Sendable {
        weak var engine: LocalCoordinationEngine?
        init(engine: LocalCoordinationEngine) { self.engine = engine }
        func receive(_ outputs: [ArbiterOutput]) { engine?.handle(outputs) }
    }

    override func transportSubmit(_ request: ClaimRequest) throws(CoordinationFailure) {
        try arbiter.submit(request, from: client)
    }

    override func release(claim: UInt64) {
        do { try arbiter.release(claim, from: client) } catch {
            logger.error("release failed", metadata: ["claim": "\(claim)", "error": "\(error.message)"])
        }
    }

    override func cancel(claim: UInt64) { arbiter.cancel(claim, from: client) }

    override func moved(from: String, to: String, claim: UInt64) throws(CoordinationFailure) {
        try arbiter.moved(from: from, to: to, claim: claim, client: client)
    }

    override func transportAddPresenter(_ presenter: UInt64, purpose: String, path: String?) throws(CoordinationFailure) {
        try arbiter.addPresenter(presenter, purpose: purpose, path: path, client: client)
    }

    override func transportUpdatePresenter(_ presenter: UInt64, path: String?) {
        try? arbiter.updatePresenter(presenter, path: path, client: client)
    }

    override func transportRemovePresenter(_ presenter: UInt64) { arbiter.removePresenter(presenter, client: client) }

    override func transportAnswer(_ answer: PresenterAnswer) { try? arbiter.answer(answer, from: client) }

    override func ubiquityAttributesChanged(at path: String, keys: [String]) {
        arbiter.ubiquityAttributesChanged(at: path, keys: keys, client: client)
    }
}
