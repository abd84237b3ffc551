public import Foundation
import Logging
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

#if !canImport(Darwin)
/// A pointer through which a method reports an error, as Foundation's Objective-C API does on
/// Apple's systems (`var error: NSError?; coordinator.coordinate(…, error: &error) { … }`).
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?
#endif

/// Coordinates reading and writing of files and directories among processes and presenters
/// (Apple's `NSFileCoordinator`), so that no writer tramples another and presenters save, step
/// aside and follow changes.
///
/// Coordination goes through the per-user Folio daemon when one runs, and stays in this process
/// otherwise; the semantics are the same. Every coordinator has its own `purposeIdentifier`;
/// coordinations with the same purpose (the same coordinator, or coordinators created with the same
/// presenter) never wait for each other.
public final class FileCoordinator: @unchecked Sendable {
    let engine: CoordinationEngine
    private weak var presenter: (any FilePresenter)?
    private let presenterIdentity: PresenterIdentity?
    private let lock = NSLock()
    private var purpose: String?
    private var purposeWasSet = false
    private var waiting: Set<UInt64> = []
    private var cancellations = 0
    private var held: [HeldClaim] = []

    /// Creates a coordinator. Coordinations it makes send `filePresenter` no messages, and
    /// `filePresenter`'s own writes in answer to a save request take priority over the request.
    public convenience init(filePresenter: (any FilePresenter)? = nil) {
        self.init(filePresenter: filePresenter, engine: CoordinationEngine.current)
    }

    /// Creates a coordinator on a given engine (tests run one suite against several).
    package init(filePresenter: (any FilePresenter)?, engine: CoordinationEngine) {
        self.engine = engine
        presenter = filePresenter
        presenterIdentity = filePresenter.map { engine.identity(of: $0) }
        if let presenterIdentity {
            purpose = presenterIdentity.purpose
            purposeWasSet = true
        }
    }

    /// Coordinations with equal purposes never block each other, even across processes. Unique per
    /// coordinator unless set; it can be set once, to a non-empty value, and not on a coordinator
    /// created with a presenter (Apple raises an exception then; so does this, as a precondition
    /// failure — use `setPurposeIdentifier(_:)` to get an error instead).
    public var purposeIdentifier: String {
        get { currentPurpose() }
        set {
            do { try setPurposeIdentifier(newValue) } catch { preconditionFailure("\(error)") }
        }
    }

    /// Sets `purposeIdentifier`, reporting misuse as an error: empty value, set twice, or set on a
    /// coordinator created with a presenter.
    public func setPurposeIdentifier(_ identifier: String) throws {
        lock.lock()
        defer { lock.unlock() }
        guard !identifier.isEmpty else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "a purposeIdentifier must not be empty"])
        }
        guard presenterIdentity == nil else {
            throw CocoaError(
                .featureUnsupported,
                userInfo: [NSLocalizedDescriptionKey: "a coordinator created with a file presenter has that presenter's purpose"])
        }
        guard !purposeWasSet else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "purposeIdentifier can be set only once"])
        }
        purpose = identifier
        purposeWasSet = true
    }

    private func currentPurpose() -> String {
        lock.lock()
        defer { lock.unlock() }
        if let purpose { return purpose }
        let made = UniqueIdentifier.next()
        purpose = made
        return made
    }

    // MARK: Synchronous coordination

    /// Reads the item at `url` once no writer holds it and its presenters have saved (unless
    /// `.withoutChanges`) and relinquished it. Blocks until `reader` returns; on failure `reader`
    /// never runs and `outError` is set.
    public func coordinate(
        readingItemAt url: URL, options: ReadingOptions = [], error outError: NSErrorPointer,
        byAccessor reader: (URL) -> Void
    ) {
        do {
            if options.contains(.forUploading) {
                try coordinateForUploading(url, options: options, reader)
            } else {
                try withClaim([Requested(url: url, access: .read(options))], multiItem: false) { urls in reader(urls[0]) }
            }
        } catch {
            outError?.pointee = error as NSError
        }
    }

    /// Writes the item at `url` once no reader or writer holds it and its presenters have
    /// relinquished it (and saved, with `.forMerging`; accommodated the deletion, with
    /// `.forDeleting`). Blocks until `writer` returns.
    public func coordinate(
        writingItemAt url: URL, options: WritingOptions = [], error outError: NSErrorPointer,
        byAccessor writer: (URL) -> Void
    ) {
        do {
            try withClaim([Requested(url: url, access: .write(options))], multiItem: false) { urls in writer(urls[0]) }
        } catch {
            outError?.pointee = error as NSError
        }
    }

    /// Reads one item and writes another under one claim, taken atomically (no deadlock with a
    /// process claiming the pair the other way round). The accessor gets the current URLs.
    public func coordinate(
        readingItemAt readingURL: URL, options readingOptions: ReadingOptions = [], writingItemAt writingURL: URL,
        options writingOptions: WritingOptions = [], error outError: NSErrorPointer,
        byAccessor readerWriter: (URL, URL) -> Void
    ) {
        do {
            try withClaim(
                [Requested(url: readingURL, access: .read(readingOptions)), Requested(url: writingURL, access: .write(writingOptions))],
                multiItem: true
            ) { urls in readerWriter(urls[0], urls[1]) }
        } catch {
            outError?.pointee = error as NSError
        }
    }

    /// Writes two items under one claim, taken atomically: the recommended move is `.forMoving` on
    /// the source and `.forReplacing` on the destination, then `item(at:didMoveTo:)`.
    public func coordinate(
        writingItemAt url1: URL, options options1: WritingOptions = [], writingItemAt url2: URL,
        options options2: WritingOptions = [], error outError: NSErrorPointer, byAccessor writer: (URL, URL) -> Void
    ) {
        do {
            try withClaim(
                [Requested(url: url1, access: .write(options1)), Requested(url: url2, access: .write(options2))],
                multiItem: true
            ) { urls in writer(urls[0], urls[1]) }
        } catch {
            outError?.pointee = error as NSError
        }
    }

    /// Tells presenters of many items at once (their contents included) that reads and writes are
    /// coming, and holds those claims until `batchAccessor` calls its completion handler. It grants
    /// no access by itself: make the per-item coordinations inside, with this coordinator.
    public func prepare(
        forReadingItemsAt readingURLs: [URL], options readingOptions: ReadingOptions = [],
        writingItemsAt writingURLs: [URL], options writingOptions: WritingOptions = [], error outError: NSErrorPointer,
        byAccessor batchAccessor: (@escaping @Sendable () -> Void) -> Void
    ) {
        do {
            guard !readingOptions.contains(.resolvesSymbolicLink), !writingOptions.contains(.forReplacing) else {
                throw CocoaError(
                    .featureUnsupported,
                    userInfo: [NSLocalizedDescriptionKey: "prepare(forReadingItemsAt:…) does not take .resolvesSymbolicLink or .forReplacing"])
            }
            let items =
                readingURLs.map { Requested(url: $0, access: .read(readingOptions.subtracting(.forUploading))) }
                + writingURLs.map { Requested(url: $0, access: .write(writingOptions)) }
            guard !items.isEmpty else {
                batchAccessor({})
                return
            }
            let granted = try acquire(items, multiItem: true, includingContents: true)
            let release = ReleaseOnce { [self] in self.finish(granted) }
            batchAccessor { release.run() }
        } catch {
            outError?.pointee = error as NSError
        }
    }

    // MARK: Moves and attributes

    /// Announces a move that is about to happen (macOS sandboxing only; it does nothing here, as on iOS).
    public func item(at oldURL: URL, willMoveTo newURL: URL) {}

    /// Reports that the item at `oldURL` now lives at `newURL`. Call it inside the coordinated write
    /// that moved it: presenters of the item and of its contents get their new URLs, directories
    /// above hear `presentedSubitem(at:didMoveTo:)`, and claims waiting on the old location follow.
    public func item(at oldURL: URL, didMoveTo newURL: URL) {
        let from = CoordinationPath.normalize(oldURL.path)
        let to = CoordinationPath.normalize(newURL.path)
        lock.lock()
        let claim = held.last(where: \.isWrite)?.claim
        lock.unlock()
        guard let claim else {
            engine.logger.error(
                "item(at:didMoveTo:) called outside a coordinated write; presenters were not told",
                metadata: ["from": "\(from)", "to": "\(to)"])
            return
        }
        do { try engine.moved(from: from, to: to, claim: claim) } catch {
            engine.logger.error("item(at:didMoveTo:) failed", metadata: ["error": "\(error.message)"])
        }
    }

    /// Tells presenters of the item that its ubiquity attributes changed.
    public func item(at url: URL, didChangeUbiquityAttributes attributes: Set<URLResourceKey>) {
        engine.ubiquityAttributesChanged(at: CoordinationPath.normalize(url.path), keys: attributes.map(\.rawValue).sorted())
    }

    /// Cancels this coordinator's coordinations that are still waiting: their accessors never run and
    /// they fail with `CocoaError.userCancelled`. An accessor already running finishes normally.
    /// Thread-safe; returns at once.
    public func cancel() {
        lock.lock()
        let claims = waiting
        cancellations += 1
        lock.unlock()
        for claim in claims { engine.cancel(claim: claim) }
    }

    // MARK: Presenters

    /// Registers a presenter, process-wide and with the daemon, so coordinations in any process
    /// send it messages. Remove it before it goes away. To be sure not to miss a change, register
    /// inside a coordinated read of the item.
    public static func addFilePresenter(_ filePresenter: any FilePresenter) {
        addFilePresenter(filePresenter, engine: CoordinationEngine.current)
    }

    /// Unregisters a presenter; no further messages reach it.
    public static func removeFilePresenter(_ filePresenter: any FilePresenter) {
        removeFilePresenter(filePresenter, engine: CoordinationEngine.current)
    }

    package static func addFilePresenter(_ filePresenter: any FilePresenter, engine: CoordinationEngine) {
        engine.register(filePresenter)
    }

    package static func removeFilePresenter(_ filePresenter: any FilePresenter, engine: CoordinationEngine) {
        engine.unregister(filePresenter)
    }

    /// The presenters registered in this process.
    public static var filePresenters: [any FilePresenter] {
        CoordinationEngine.current.registeredPresenters
    }

    // MARK: Claims

    struct Requested {
        var url: URL
        var access: ClaimAccess
    }

    struct Granted {
        var claim: UInt64
        var urls: [URL]
        var isWrite: Bool
    }

    struct HeldClaim {
        var claim: UInt64
        var thread: pthread_t
        var writes: [String]
        var isWrite: Bool
        var multiItem: Bool
    }

    /// Claims, runs `body` with the granted URLs, releases.
    func withClaim<T>(_ items: [Requested], multiItem: Bool, _ body: ([URL]) throws -> T) throws -> T {
        let granted = try acquire(items, multiItem: multiItem)
        defer { finish(granted) }
        return try body(granted.urls)
    }

    /// Takes a claim, blocking until it is granted or fails.
    func acquire(_ items: [Requested], multiItem: Bool, includingContents: Bool = false) throws -> Granted {
        var (request, resolved, isWrite) = try prepareRequest(items, multiItem: multiItem)
        request.includesContents = includingContents
        let waiter = ClaimWaiter()
        lock.lock()
        waiting.insert(request.claim)
        let cancelsBefore = cancellations
        lock.unlock()
        engine.submit(request) { result in waiter.finish(result) }
        lock.lock()
        let cancelledMeanwhile = cancellations != cancelsBefore
        lock.unlock()
        if cancelledMeanwhile { engine.cancel(claim: request.claim) }
        let result = engine.wait(for: waiter)
        return try granted(request, resolved, isWrite: isWrite, multiItem: multiItem, result)
    }

    /// Takes a claim without blocking a thread.
    func acquireAsync(_ items: [Requested], multiItem: Bool) async throws -> Granted {
        let (request, resolved, isWrite) = try prepareRequest(items, multiItem: multiItem)
        lock.withLock { _ = waiting.insert(request.claim) }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[String], CoordinationFailure>, Never>) in
                engine.submit(request) { result in continuation.resume(returning: result) }
                // A cancellation that came before the claim existed (the handler below then had
                // nothing to cancel) is applied now.
                if Task.isCancelled { engine.cancel(claim: request.claim) }
            }
        } onCancel: {
            engine.cancel(claim: request.claim)
        }
        return try granted(request, resolved, isWrite: isWrite, multiItem: multiItem, result)
    }

    /// Takes a claim and calls `completion` when it is granted or fails.
    func acquire(
        _ items: [Requested], multiItem: Bool, completion: @escaping @Sendable (Result<Granted, any Error>) -> Void
    ) {
        let prepared: (ClaimRequest, [Requested], Bool)
        do { prepared = try prepareRequest(items, multiItem: multiItem) } catch {
            completion(.failure(error))
            return
        }
        let (request, resolved, isWrite) = prepared
        lock.lock()
        waiting.insert(request.claim)
        lock.unlock()
        let box = UncheckedBox(resolved)
        engine.submit(request) { [self] result in
            completion(Result { try self.granted(request, box.value, isWrite: isWrite, multiItem: multiItem, result) })
        }
    }

    private func prepareRequest(_ items: [Requested], multiItem: Bool) throws -> (ClaimRequest, [Requested], Bool) {
        var resolved = items
        var claimItems: [ClaimItem] = []
        claimItems.reserveCapacity(items.count)
        for index in resolved.indices {
            if case .read(let options) = resolved[index].access, options.contains(.resolvesSymbolicLink) {
                resolved[index].url = SymbolicLinks.resolve(resolved[index].url)
            }
            claimItems.append(
                ClaimItem(path: CoordinationPath.normalize(resolved[index].url.path), access: resolved[index].access))
        }
        let writes = claimItems.filter(\.access.isWrite).map(\.path)
        if !multiItem, !writes.isEmpty { try checkNotNested(writes) }
        let request = ClaimRequest(
            claim: engine.makeNumber(), purpose: currentPurpose(), presenter: presenterIdentity?.number, items: claimItems)
        return (request, resolved, !writes.isEmpty)
    }

    /// A single-item write inside a single-item write of the same item, on the same coordinator and
    /// thread, is an error (Apple raises); it would otherwise look like a second writer.
    private func checkNotNested(_ writes: [String]) throws {
        let me = pthread_self()
        lock.lock()
        defer { lock.unlock() }
        for claim in held where !claim.multiItem && pthread_equal(claim.thread, me) != 0 {
            for outer in claim.writes {
                for inner in writes
                where CoordinationPath.isSelfOrDescendant(inner, of: outer) || CoordinationPath.isAncestor(inner, of: outer) {
                    throw CocoaError(
                        .featureUnsupported,
                        userInfo: [
                            NSLocalizedDescriptionKey:
                                "a coordinated write of \(inner) was requested inside this coordinator's own write of \(outer)",
                            NSFilePathErrorKey: inner,
                        ])
                }
            }
        }
    }

    private func granted(
        _ request: ClaimRequest, _ resolved: [Requested], isWrite: Bool, multiItem: Bool,
        _ result: Result<[String], CoordinationFailure>
    ) throws -> Granted {
        lock.lock()
        waiting.remove(request.claim)
        lock.unlock()
        switch result {
        case .failure(let failure):
            throw failure.publicError
        case .success(let paths):
            var urls: [URL] = []
            urls.reserveCapacity(paths.count)
            for (index, path) in paths.enumerated() {
                let original = resolved[index].url
                urls.append(
                    path == request.items[index].path
                        ? original : URL(fileURLWithPath: path, isDirectory: original.hasDirectoryPath))
            }
            lock.lock()
            held.append(
                HeldClaim(
                    claim: request.claim, thread: pthread_self(), writes: request.items.filter(\.access.isWrite).map(\.path),
                    isWrite: isWrite, multiItem: multiItem))
            lock.unlock()
            return Granted(claim: request.claim, urls: urls, isWrite: isWrite)
        }
    }

    /// Releases a granted claim and reads the presenter's URL again.
    func finish(_ granted: Granted) {
        lock.lock()
        var writes: [String] = []
        if let index = held.lastIndex(where: { $0.claim == granted.claim }) { writes = held.remove(at: index).writes }
        lock.unlock()
        if !writes.isEmpty { MetadataStitching.shared.writesEnding(writes) }
        engine.release(claim: granted.claim)
        if let presenter { engine.refreshURL(of: presenter) }
    }
}

/// Waits for one claim's outcome.
final class ClaimWaiter: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var result: Result<[String], CoordinationFailure>?

    func finish(_ outcome: Result<[String], CoordinationFailure>) {
        lock.lock()
        result = outcome
        lock.unlock()
        semaphore.signal()
    }

    /// Whether the outcome is in (`wait()` then returns at once).
    func isFinished() -> Bool { lock.withLock { result != nil } }

    func wait() -> Result<[String], CoordinationFailure> {
        semaphore.wait()
        lock.lock()
        defer { lock.unlock() }
        return result!
    }
}

/// Runs a closure at most once.
final class ReleaseOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var action: (() -> Void)?

    init(_ action: @escaping () -> Void) { self.action = action }

    func run() {
        lock.lock()
        let taken = action
        action = nil
        lock.unlock()
        taken?()
    }
}

/// Carries a value the compiler cannot prove Sendable across a callback that runs once.
struct UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
