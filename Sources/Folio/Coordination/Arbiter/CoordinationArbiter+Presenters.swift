import FolioSystem
import Logging
import SystemPackage

extension CoordinationArbiter {
    // MARK: Registry

    /// Registers a presenter of `path` (nil: the item does not exist yet).
    package func addPresenter(_ presenter: UInt64, purpose: String, path: String?, client: UInt32) throws(CoordinationFailure) {
        try performThrowing { (state: inout ArbiterState) throws(CoordinationFailure) in
            guard state.clients[client] != nil else { throw CoordinationFailure(kind: .connectionLost, message: "the client has gone") }
            let key = PresenterKey(client: client, presenter: presenter)
            guard state.presenters[key] == nil else {
                throw CoordinationFailure(kind: .invalid, message: "presenter \(presenter) is already registered")
            }
            state.presenters[key] = PresenterRecord(purpose: purpose, path: path)
            state.index(key, at: path)
            updateWatches(for: key, state: &state)
        }
    }

    /// Records a presenter's new URL, as read back from it after its own coordination.
    package func updatePresenter(_ presenter: UInt64, path: String?, client: UInt32) throws(CoordinationFailure) {
        try performThrowing { (state: inout ArbiterState) throws(CoordinationFailure) in
            let key = PresenterKey(client: client, presenter: presenter)
            guard let record = state.presenters[key] else {
                throw CoordinationFailure(kind: .invalid, message: "no presenter \(presenter)")
            }
            guard record.path != path else { return }
            state.unindex(key, at: record.path)
            state.presenters[key]?.path = path
            state.index(key, at: path)
            updateWatches(for: key, state: &state)
        }
    }

    /// Unregisters a presenter: it gets no further messages, and claims waiting for its answers go on.
    package func removePresenter(_ presenter: UInt64, client: UInt32) {
        perform { state in
            dropPresenter(PresenterKey(client: client, presenter: presenter), state: &state)
            pump(&state)
        }
    }

    func dropPresenter(_ key: PresenterKey, state: inout ArbiterState) {
        guard let record = state.presenters.removeValue(forKey: key) else { return }
        state.unindex(key, at: record.path)
        updateWatches(for: key, state: &state)
        for (token, pending) in state.tokens where pending.presenter == key {
            state.tokens[token] = nil
            if let claimKey = pending.claim, let claim = state.claims[claimKey] {
                claim.awaiting[token] = nil
                claim.remaining[key] = nil
            }
        }
    }

    /// Presenters registered at `path`.
    func presenters(at path: String, _ state: ArbiterState) -> [PresenterKey] {
        state.presentersByPath[path] ?? []
    }

    /// Presenters of items strictly inside `path`.
    func presenters(inside path: String, _ state: ArbiterState) -> [PresenterKey] {
        state.presenters.compactMap { key, record in
            guard let p = record.path, CoordinationPath.isAncestor(path, of: p) else { return nil }
            return key
        }.sorted { ($0.client, $0.presenter) < ($1.client, $1.presenter) }
    }

    func hasAncestorPresenter(_ path: String, _ state: ArbiterState) -> Bool {
        guard !state.presentersByPath.isEmpty else { return false }
        return CoordinationPath.ancestors(of: path).contains { state.presentersByPath[$0] != nil }
    }

    // MARK: Messaging before a grant

    /// Works out the messages the claim owes presenters (Apple's table, FC.h) and sends the first
    /// one to each presenter; grants at once when there are none.
    func startMessaging(_ claim: Claim, state: inout ArbiterState) {
        claim.phase = .messaging
        var plan: [PresenterKey: [PresenterMessage]] = [:]
        var order: [PresenterKey] = []
        func add(_ presenter: PresenterKey, _ message: PresenterMessage) {
            guard presenter != claim.presenter else { return }
            if plan[presenter] == nil { order.append(presenter) }
            if plan[presenter, default: []].contains(message) { return }
            plan[presenter, default: []].append(message)
        }
        if !state.presenters.isEmpty {
            for item in claim.items where !isCoveredBySamePurpose(item, claim, state) {
                var direct = presenters(at: item.path, state)
                if claim.includesContents { direct += presenters(inside: item.path, state) }
                let packages = enclosingPackages(of: item.path, &state)
                let packagePresenters = packages.flatMap { presenters(at: $0, state) }
                switch item.access {
                case .read(let options):
                    for presenter in direct + packagePresenters {
                        if !options.contains(.withoutChanges) { add(presenter, .savePresentedItemChanges) }
                        add(presenter, .relinquishToReader)
                    }
                case .write(let options) where options.contains(.forEvicting):
                    // An eviction asks the item's presenters, and those of everything inside a
                    // folder, to accommodate it (they close and unregister); nothing else.
                    for presenter in direct + presenters(inside: item.path, state) { add(presenter, .accommodateEviction) }
                case .write(let options):
                    for presenter in direct + packagePresenters {
                        if options.contains(.forMerging) { add(presenter, .savePresentedItemChanges) }
                        add(presenter, .relinquishToWriter)
                    }
                    let deleting = !options.isDisjoint(with: FileCoordinator.WritingOptions.deleting)
                    if item.access.isStructural {
                        for presenter in presenters(inside: item.path, state) {
                            add(presenter, .relinquishToWriter)
                            if deleting { add(presenter, .accommodateDeletion) }
                        }
                    }
                    if deleting {
                        for presenter in direct { add(presenter, .accommodateDeletion) }
                        for presenter in packagePresenters { add(presenter, .accommodateSubitemDeletion(path: item.path)) }
                    }
                }
            }
        }
        for presenter in order {
            var messages = plan[presenter]!
            messages.sort { $0.rank < $1.rank }
            let first = messages.removeFirst()
            claim.remaining[presenter] = messages
            send(first, to: presenter, for: claim, state: &state)
        }
        // With nothing to wait for, `pump` grants the claim on its next look.
    }

    /// Whether a granted claim of the same purpose already covers the item (a nested coordination):
    /// its presenters were messaged already.
    private func isCoveredBySamePurpose(_ item: ItemState, _ claim: Claim, _ state: ArbiterState) -> Bool {
        for other in state.queue where other !== claim && other.phase == .granted && other.purpose == claim.purpose {
            for held in other.items where CoordinationPath.isSelfOrDescendant(item.key, of: held.key) {
                if held.access.isWrite || !item.access.isWrite { return true }
            }
        }
        return false
    }

    private func send(_ message: PresenterMessage, to presenter: PresenterKey, for claim: Claim, state: inout ArbiterState) {
        state.nextToken += 1
        let token = state.nextToken
        state.tokens[token] = TokenRecord(claim: claim.key, presenter: presenter, message: message, sentAt: .now)
        claim.awaiting[token] = presenter
        state.emit(to: presenter.client, .presenter(presenter.presenter, message, token: token))
        schedule(after: configuration.presenterTimeout) { [weak self] in self?.expire(token) }
    }

    /// Takes a presenter's answer.
    package func answer(_ answer: PresenterAnswer, from client: UInt32) throws(CoordinationFailure) {
        try performThrowing { (state: inout ArbiterState) throws(CoordinationFailure) in
            guard let record = state.tokens[answer.token], record.presenter.client == client else {
                throw CoordinationFailure(kind: .invalid, message: "no message \(answer.token) awaits an answer")
            }
            state.tokens[answer.token] = nil
            guard let claimKey = record.claim, let claim = state.claims[claimKey] else {
                // The claim ended meanwhile: give the presenter its item back at once.
                if record.message.isRelinquish && answer.hasReacquirer && state.presenters[record.presenter] != nil {
                    state.emit(
                        to: client, .presenter(record.presenter.presenter, .reacquire(token: answer.token), token: nil))
                }
                return
            }
            claim.awaiting[answer.token] = nil
            if record.message.isRelinquish && answer.hasReacquirer {
                claim.reacquirers.append((record.presenter, answer.token))
            }
            if let error = answer.error, !record.message.isRelinquish {
                fail(claim, error, state: &state)
                pump(&state)
                return
            }
            if var rest = claim.remaining[record.presenter], !rest.isEmpty {
                let next = rest.removeFirst()
                claim.remaining[record.presenter] = rest
                send(next, to: record.presenter, for: claim, state: &state)
            } else {
                claim.remaining[record.presenter] = nil
            }
            pump(&state)
        }
    }

    /// A message went unanswered for the whole timeout: the claim waiting for it fails, and the
    /// culprit is logged.
    func expire(_ token: UInt64) {
        perform { state in
            guard let record = state.tokens[token], let claimKey = record.claim, let claim = state.claims[claimKey] else {
                return
            }
            let client = state.clients[record.presenter.client]
            let path = state.presenters[record.presenter]?.path ?? "(no item)"
            let message =
                "presenter \(record.presenter.presenter) of process \(client?.pid ?? 0) (\(client?.name ?? "?")) at \(path) did not answer \(record.message) within \(configuration.presenterTimeout)"
            logger.warning(
                "presenter did not answer",
                metadata: [
                    "presenter": "\(record.presenter.presenter)", "pid": "\(client?.pid ?? 0)", "path": "\(path)",
                    "message": "\(record.message)",
                ])
            fail(claim, CoordinationFailure(kind: .presenterTimeout, message: message), state: &state)
            pump(&state)
        }
    }

    private func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        scheduleWork(delay, work)
    }

    // MARK: After a write

    /// Tells presenters what a released write changed: the item's presenters get
    /// `presentedItemDidChange` (files and packages), directory presenters above get
    /// `presentedSubitemDidAppear` or `presentedSubitemDidChange`. The writer's own presenter gets
    /// nothing.
    func notifyChanges(after claim: Claim, state: inout ArbiterState) {
        guard !state.presenters.isEmpty else { return }
        for item in claim.items {
            guard case .write(let options) = item.access, options.isDisjoint(with: .forMoving) else { continue }
            let deleting = !options.isDisjoint(with: FileCoordinator.WritingOptions.deleting)
            let status = try? FileStatus(path: FilePath(item.path))
            recordStamp(item.path, ItemStamp(path: item.path), &state)
            if !deleting, status != nil {
                let isPlainDirectory = status?.kind == .directory && !isPackagePath(item.path, &state)
                if !isPlainDirectory {
                    for presenter in presenters(at: item.path, state) where presenter != claim.presenter {
                        state.emit(to: presenter.client, .presenter(presenter.presenter, .didChange, token: nil))
                    }
                }
            }
            if deleting && status != nil { continue }  // replaced by a move: that move reports it
            let appeared = item.existedBefore == false && status != nil
            let packages = Set(enclosingPackages(of: item.path, &state))
            for ancestor in CoordinationPath.ancestors(of: item.path) {
                // Packages were asked to accommodate a deletion already.
                if deleting && packages.contains(ancestor) { continue }
                for presenter in presenters(at: ancestor, state) where presenter != claim.presenter {
                    let message: PresenterMessage =
                        appeared ? .subitemDidAppear(path: item.path) : .subitemDidChange(path: item.path)
                    state.emit(to: presenter.client, .presenter(presenter.presenter, message, token: nil))
                }
            }
        }
    }

    func isPackagePath(_ path: String, _ state: inout ArbiterState) -> Bool {
        guard let slash = path.lastIndex(of: "/") else { return false }
        let name = path[path.index(after: slash)...]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return isPackageExtension(String(name[name.index(after: dot)...]), &state)
    }

    // MARK: Moves

    func applyMove(from: String, to: String, excluding writer: PresenterKey?, state: inout ArbiterState) {
        var moved: Set<PresenterKey> = []
        for (key, record) in state.presenters {
            guard let path = record.path, CoordinationPath.isSelfOrDescendant(path, of: from) else { continue }
            let newPath = CoordinationPath.rebase(path, from: from, to: to)
            state.unindex(key, at: path)
            state.presenters[key]?.path = newPath
            state.index(key, at: newPath)
            moved.insert(key)
            updateWatches(for: key, state: &state)
            if key != writer { state.emit(to: key.client, .presenter(key.presenter, .didMove(to: newPath), token: nil)) }
        }
        recordStamp(from, .absent, &state)
        recordStamp(to, ItemStamp(path: to), &state)
        var told: Set<PresenterKey> = moved
        if let writer { told.insert(writer) }
        var directories = CoordinationPath.ancestors(of: from)
        for ancestor in CoordinationPath.ancestors(of: to) where !directories.contains(ancestor) {
            directories.append(ancestor)
        }
        for directory in directories {
            for presenter in presenters(at: directory, state) where told.insert(presenter).inserted {
                state.emit(to: presenter.client, .presenter(presenter.presenter, .subitemDidMove(from: from, to: to), token: nil))
            }
        }
        for claim in state.queue where claim.phase != .granted {
            for index in claim.items.indices {
                let item = claim.items[index]
                if case .write(let options) = item.access, options.contains(.forReplacing) { continue }
                guard CoordinationPath.isSelfOrDescendant(item.path, of: from) else { continue }
                claim.items[index].path = CoordinationPath.rebase(item.path, from: from, to: to)
                claim.items[index].key = conflictKey(claim.items[index].path, &state)
            }
        }
    }

    // MARK: Versions

    /// Tells the presenters of the item at `path` that its versions changed (`presentedItemDidGain`,
    /// `…DidLose`, `…DidResolveConflict`), and the presenters of the folders above it through the
    /// subitem messages.
    package func versionsChanged(at path: String, _ changes: [(VersionChange, VersionRecord)]) {
        guard !changes.isEmpty else { return }
        perform { state in
            let itemPresenters = presenters(at: path, state)
            for presenter in itemPresenters {
                for (change, record) in changes {
                    state.emit(to: presenter.client, .presenter(presenter.presenter, .versionChanged(change, record: record, subitem: nil), token: nil))
                }
            }
            var told = Set(itemPresenters)
            for directory in CoordinationPath.ancestors(of: path) {
                for presenter in presenters(at: directory, state) where told.insert(presenter).inserted {
                    for (change, record) in changes {
                        state.emit(to: presenter.client, .presenter(presenter.presenter, .versionChanged(change, record: record, subitem: path), token: nil))
                    }
                }
            }
        }
    }

    // MARK: Ubiquity attributes

    /// Fans out `presentedItemDidChangeUbiquityAttributes` to the item's presenters.
    package func ubiquityAttributesChanged(at path: String, keys: [String], client: UInt32) {
        perform { state in
            for presenter in presenters(at: path, state) {
                state.emit(to: presenter.client, .presenter(presenter.presenter, .didChangeUbiquityAttributes(keys), token: nil))
            }
        }
    }
}
