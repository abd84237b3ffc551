import Foundation
import Logging

/// The library's side of coordination: numbers claims and presenters, waits for grants, and runs
/// presenter messages on the presenters' queues. Subclasses carry the requests to an arbiter — in
/// this process (`LocalCoordinationEngine`) or in the daemon (`DaemonCoordinationEngine`) — and feed
/// the arbiter's outputs back through `handle(_:)`. The two behave the same; only their reach differs.
package class CoordinationEngine: @unchecked Sendable {
    typealias Completion = @Sendable (Result<[String], CoordinationFailure>) -> Void

    let logger: Logger
    private let lock = NSLock()
    private var lastNumber: UInt64 = 0
    private var pending: [UInt64: Completion] = [:]
    private var boxes: [UInt64: PresenterBox] = [:]
    private var identities: [ObjectIdentifier: PresenterIdentity] = [:]
    private var reacquirers: [UInt64: @Sendable () -> Void] = [:]

    init(logger: Logger) {
        self.logger = logger
    }

    /// A number for a new claim or presenter, unique in this engine.
    func makeNumber() -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        lastNumber += 1
        return lastNumber
    }

    // MARK: Transport (subclasses)

    func transportSubmit(_ request: ClaimRequest) throws(CoordinationFailure) { fatalError("abstract") }
    /// Releases a granted claim.
    func release(claim: UInt64) { fatalError("abstract") }
    /// Cancels a claim not granted yet; it then fails with `cancelled`.
    func cancel(claim: UInt64) { fatalError("abstract") }
    /// Reports a move made inside the granted write `claim`.
    func moved(from: String, to: String, claim: UInt64) throws(CoordinationFailure) { fatalError("abstract") }
    func transportAddPresenter(_ presenter: UInt64, purpose: String, path: String?) throws(CoordinationFailure) {
        fatalError("abstract")
    }
    func transportUpdatePresenter(_ presenter: UInt64, path: String?) { fatalError("abstract") }
    func transportRemovePresenter(_ presenter: UInt64) { fatalError("abstract") }
    func transportAnswer(_ answer: PresenterAnswer) { fatalError("abstract") }
    /// Fans out a change of ubiquity attributes.
    func ubiquityAttributesChanged(at path: String, keys: [String]) { fatalError("abstract") }

    // MARK: Claims

    /// Queues a claim; `completion` runs once, with the granted paths or the failure, on whichever
    /// thread learns the outcome.
    func submit(_ request: ClaimRequest, completion: @escaping Completion) {
        for item in request.items where item.access.isWrite && SecurityScopes.shared.deniesWriting(item.path) {
            // The URL came with a read-only scope (`.securityScopeAllowOnlyReadAccess`).
            completion(.failure(CoordinationFailure(
                kind: .denied, message: "\(item.path) was opened with a read-only security scope",
                code: CocoaError.Code.fileWriteNoPermission.rawValue)))
            return
        }
        lock.lock()
        pending[request.claim] = completion
        lock.unlock()
        do {
            try transportSubmit(request)
        } catch {
            lock.lock()
            let waiting = pending.removeValue(forKey: request.claim)
            lock.unlock()
            waiting?(.failure(error))
        }
    }

    /// Blocks until `waiter` has its claim's outcome. The daemon's engine reads its connection
    /// meanwhile, so that the grant wakes this thread directly.
    func wait(for waiter: ClaimWaiter) -> Result<[String], CoordinationFailure> { waiter.wait() }

    /// Takes the arbiter's outputs for this client.
    func handle(_ outputs: [ArbiterOutput]) {
        for output in outputs {
            switch output {
            case .granted(let claim, let paths):
                complete(claim, .success(paths))
            case .failed(let claim, let failure):
                complete(claim, .failure(failure))
            case .presenter(let presenter, let message, let token):
                deliver(message, to: presenter, token: token)
            }
        }
    }

    private func complete(_ claim: UInt64, _ result: Result<[String], CoordinationFailure>) {
        lock.lock()
        let completion = pending.removeValue(forKey: claim)
        lock.unlock()
        completion?(result)
    }

    /// Fails every claim still waiting (the daemon went away).
    func failAllPending(_ failure: CoordinationFailure) {
        lock.lock()
        let all = pending
        pending.removeAll()
        lock.unlock()
        for completion in all.values { completion(.failure(failure)) }
    }

    // MARK: Presenters

    /// The number and purpose a presenter has in this engine (assigned on first use, registered or not).
    func identity(of presenter: any FilePresenter) -> PresenterIdentity {
        let id = ObjectIdentifier(presenter)
        lock.lock()
        if let known = identities[id], known.object === presenter {
            lock.unlock()
            return known
        }
        lock.unlock()
        let number = makeNumber()
        let identity = PresenterIdentity(
            number: number, purpose: "presenter-\(UUID().uuidString)", object: presenter)
        lock.lock()
        defer { lock.unlock() }
        if let known = identities[id], known.object === presenter { return known }
        identities[id] = identity
        return identity
    }

    /// Registers `presenter` with the arbiter. Registering it twice does nothing.
    func register(_ presenter: any FilePresenter) {
        let identity = identity(of: presenter)
        let path = presenter.presentedItemURL.map { CoordinationPath.normalize($0.path) }
        lock.lock()
        if boxes[identity.number] != nil {
            lock.unlock()
            return
        }
        boxes[identity.number] = PresenterBox(presenter: presenter, path: path)
        lock.unlock()
        do {
            try transportAddPresenter(identity.number, purpose: identity.purpose, path: path)
        } catch {
            logger.error("cannot register a file presenter", metadata: ["error": "\(error.message)"])
        }
    }

    /// Unregisters `presenter`; no message reaches it afterwards.
    func unregister(_ presenter: any FilePresenter) {
        let id = ObjectIdentifier(presenter)
        lock.lock()
        guard let identity = identities[id], identity.object === presenter,
            boxes.removeValue(forKey: identity.number) != nil
        else {
            lock.unlock()
            return
        }
        identities[id] = nil
        lock.unlock()
        transportRemovePresenter(identity.number)
    }

    /// Number, purpose and path of every registered presenter (to register them again with a
    /// restarted daemon).
    func presenterRegistrations() -> [(UInt64, String, String?)] {
        lock.lock()
        defer { lock.unlock() }
        return boxes.sorted { $0.key < $1.key }.compactMap { number, box in
            guard let identity = identities[ObjectIdentifier(box.presenter)] else { return nil }
            return (number, identity.purpose, box.path)
        }
    }

    /// The registered presenters.
    var registeredPresenters: [any FilePresenter] {
        lock.lock()
        defer { lock.unlock() }
        return boxes.sorted { $0.key < $1.key }.map(\.value.presenter)
    }

    /// Reads the presenter's URL again after a coordination on its behalf, and tells the arbiter
    /// when it changed.
    func refreshURL(of presenter: any FilePresenter) {
        let identity = identity(of: presenter)
        let path = presenter.presentedItemURL.map { CoordinationPath.normalize($0.path) }
        lock.lock()
        guard let box = boxes[identity.number], box.path != path else {
            lock.unlock()
            return
        }
        box.path = path
        lock.unlock()
        transportUpdatePresenter(identity.number, path: path)
    }

    private func box(_ number: UInt64) -> PresenterBox? {
        lock.lock()
        defer { lock.unlock() }
        return boxes[number]
    }

    private func isRegistered(_ box: PresenterBox, as number: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return boxes[number] === box
    }

    /// Runs one message on the presenter's queue; messages that need an answer are answered exactly
    /// once, even by a presenter that calls its handler twice or has gone.
    private func deliver(_ message: PresenterMessage, to number: UInt64, token: UInt64?) {
        guard let box = box(number) else {
            if let token { transportAnswer(PresenterAnswer(token: token)) }
            return
        }
        if case .didMove(let to) = message {
            lock.lock()
            box.path = to
            lock.unlock()
        }
        let answer = AnswerOnce(engine: self, token: token)
        box.presenter.presentedItemOperationQueue.addOperation { [self] in
            guard isRegistered(box, as: number) else {
                answer.send(nil, hasReacquirer: false)
                return
            }
            let presenter = box.presenter
            switch message {
            case .savePresentedItemChanges:
                presenter.savePresentedItemChanges { error in answer.send(error, hasReacquirer: false) }
            case .relinquishToReader:
                presenter.relinquishPresentedItem(toReader: { reacquirer in self.relinquished(reacquirer, answer) })
            case .relinquishToWriter:
                presenter.relinquishPresentedItem(toWriter: { reacquirer in self.relinquished(reacquirer, answer) })
            case .accommodateDeletion:
                presenter.accommodatePresentedItemDeletion { error in answer.send(error, hasReacquirer: false) }
            case .accommodateEviction:
                presenter.accommodatePresentedItemEviction { error in answer.send(error, hasReacquirer: false) }
            case .accommodateSubitemDeletion(let path):
                presenter.accommodatePresentedSubitemDeletion(at: URL(fileURLWithPath: path)) { error in
                    answer.send(error, hasReacquirer: false)
                }
            case .reacquire(let token):
                lock.lock()
                let reacquirer = reacquirers.removeValue(forKey: token)
                lock.unlock()
                reacquirer?()
            case .didChange:
                presenter.presentedItemDidChange()
            case .didMove(let to):
                presenter.presentedItemDidMove(to: URL(fileURLWithPath: to))
            case .subitemDidAppear(let path):
                presenter.presentedSubitemDidAppear(at: URL(fileURLWithPath: path))
            case .subitemDidChange(let path):
                presenter.presentedSubitemDidChange(at: URL(fileURLWithPath: path))
            case .subitemDidMove(let from, let to):
                presenter.presentedSubitem(at: URL(fileURLWithPath: from), didMoveTo: URL(fileURLWithPath: to))
            case .didChangeUbiquityAttributes(let names):
                let observed = presenter.observedPresentedItemUbiquityAttributes
                let keys = Set(names.map { URLResourceKey(rawValue: $0) }).intersection(observed)
                if !keys.isEmpty { presenter.presentedItemDidChangeUbiquityAttributes(keys) }
            case .versionChanged(let change, let record, let subitem):
                guard let item = subitem.map({ URL(fileURLWithPath: $0) }) ?? presenter.presentedItemURL else { break }
                // The version as the store has it now (a lost one as it was).
                let version = FileVersion.version(itemAt: item, forPersistentIdentifier: record.id)
                    ?? FileVersion(
                        store: .current, identity: (try? VersionStore.current.identity(ofItemAt: item.path, creating: false).identity) ?? "inode-0-0",
                        itemPath: CoordinationPath.normalize(item.path), record: record)
                switch (change, subitem) {
                case (.gained, nil): presenter.presentedItemDidGain(version)
                case (.lost, nil): presenter.presentedItemDidLose(version)
                case (.resolved, nil): presenter.presentedItemDidResolveConflict(version)
                case (.gained, _?): presenter.presentedSubitem(at: item, didGain: version)
                case (.lost, _?): presenter.presentedSubitem(at: item, didLose: version)
                case (.resolved, _?): presenter.presentedSubitem(at: item, didResolve: version)
                }
            }
        }
    }

    private func relinquished(_ reacquirer: (@Sendable () -> Void)?, _ answer: AnswerOnce) {
        if let reacquirer, let token = answer.token {
            lock.lock()
            reacquirers[token] = reacquirer
            lock.unlock()
        }
        answer.send(nil, hasReacquirer: reacquirer != nil)
    }
}

/// A presenter's number and purpose within one engine.
struct PresenterIdentity {
    var number: UInt64
    var purpose: String
    weak var object: (any FilePresenter)?
}

/// A registered presenter. Messages are delivered on the presenter's own queue, which is the
/// presenter's contract for thread safety.
final class PresenterBox: @unchecked Sendable {
    let presenter: any FilePresenter
    /// The path the arbiter knows for it.
    var path: String?

    init(presenter: any FilePresenter, path: String?) {
        self.presenter = presenter
        self.path = path
    }
}

/// Sends one answer for one message, however often the presenter calls back.
final class AnswerOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var sent = false
    private let engine: CoordinationEngine
    let token: UInt64?

    init(engine: CoordinationEngine, token: UInt64?) {
        self.engine = engine
        self.token = token
    }

    func send(_ error: (any Error)?, hasReacquirer: Bool) {
        guard let token else { return }
        lock.lock()
        let first = !sent
        sent = true
        lock.unlock()
        guard first else { return }
        engine.transportAnswer(
            PresenterAnswer(token: token, error: error.map(CoordinationFailure.init(presenterError:)), hasReacquirer: hasReacquirer))
    }
}
