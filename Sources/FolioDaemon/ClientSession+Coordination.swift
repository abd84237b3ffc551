import Folio

extension ClientSession {
    /// The coordination requests. They answer from the arbiter's table on the event loop, except
    /// where an app's paths are checked on disk or a drive placeholder is looked for.
    static let coordinationRoutes = [
        RequestRoute(SubmitClaim.self, placement: { session, claim in session.claimPlacement(claim) }) {
            session, claim, id throws(CoordinationFailure) in try session.claim(claim, id: id)
        },
        RequestRoute(Release.self, on: .eventLoop) { session, release, _ throws(CoordinationFailure) in
            try session.context.arbiter.release(release.claim, from: try session.helloed())
            return Acknowledged()
        },
        RequestRoute(Cancel.self, on: .eventLoop) { session, cancel, _ throws(CoordinationFailure) in
            session.context.arbiter.cancel(cancel.claim, from: try session.helloed())
            return Acknowledged()
        },
        RequestRoute(Moved.self, placement: { session, _ in session.appChecksPlacement }) { session, moved, _ throws(CoordinationFailure) in
            let client = try session.helloed()
            // The arbiter checks that `from` is held by the sender's granted write; where it went
            // must be a place the app may write.
            let to = try session.context.access.checkedPath(app: session.app, path: moved.to, write: true)
            // `from` is compared as text with what the sender's claims hold (their checked paths).
            try session.context.arbiter.moved(from: moved.from.comparedAsText, to: to, claim: moved.claim, client: client)
            return Acknowledged()
        },
        RequestRoute(PresenterAdd.self, placement: { session, add in session.declaredApp != nil && add.path != nil ? .quick : .eventLoop }) {
            session, add, _ throws(CoordinationFailure) in
            let client = try session.helloed()
            // An app presents what its check resolved (the same path unless a link was swapped in).
            let path = try add.path.map { path throws(CoordinationFailure) in try session.context.access.checkedPath(app: session.app, path: path, write: false) }
            try session.context.arbiter.addPresenter(add.presenter, purpose: add.purpose, path: path, client: client)
            return Acknowledged()
        },
        RequestRoute(PresenterUpdate.self, placement: { session, update in session.declaredApp != nil && update.path != nil ? .quick : .eventLoop }) {
            session, update, _ throws(CoordinationFailure) in
            let client = try session.helloed()
            // As for presenter.add: an app presents only what it may read.
            let path = try update.path.map { path throws(CoordinationFailure) in
                try session.context.access.checkedPath(app: session.app, path: path, write: false)
            }
            try session.context.arbiter.updatePresenter(update.presenter, path: path, client: client)
            return Acknowledged()
        },
        RequestRoute(PresenterRemove.self, on: .eventLoop) { session, remove, _ throws(CoordinationFailure) in
            session.context.arbiter.removePresenter(remove.presenter, client: try session.helloed())
            return Acknowledged()
        },
        RequestRoute(PresenterReply.self, on: .eventLoop) { session, reply, _ throws(CoordinationFailure) in
            try session.context.arbiter.answer(reply.answer, from: try session.helloed())
            return Acknowledged()
        },
        RequestRoute(UbiquityChanged.self, placement: { session, _ in session.appChecksPlacement }) { session, changed, _ throws(CoordinationFailure) in
            let client = try session.helloed()
            // Other processes' presenters hear it: an app may announce changes only to what it may write.
            let path = try session.context.access.checkedPath(app: session.app, path: changed.path, write: true)
            session.context.arbiter.ubiquityAttributesChanged(at: path, keys: changed.keys, client: client)
            return Acknowledged()
        },
    ]

    /// An app's paths are checked (realpath, stat); a placeholder in the drive is looked for.
    private func claimPlacement(_ claim: SubmitClaim) -> RequestPlacement {
        if declaredApp != nil { return .quick }
        if let drive = context.drive, claim.items.contains(where: { drive.contains($0.path.comparedAsText) }) { return .quick }
        return .eventLoop
    }

    /// Submits a claim, named by its frame's id; its reply is its grant, from the arbiter.
    private func claim(_ claim: SubmitClaim, id: Int64?) throws(CoordinationFailure) -> ClaimGrant? {
        guard let id, id > 0 else { throw CoordinationFailure(kind: .invalid, message: "a claim needs a positive \"id\", which names the claim") }
        let client = try helloed()
        var request = claim.request(claim: UInt64(id))
        if let app {
            // Each item as its check resolved it (the same path unless a link was swapped in).
            for index in request.items.indices {
                let item = request.items[index]
                request.items[index].path = try context.access.checkedPath(app: app, path: claim.items[index].path, write: item.access.isWrite)
            }
        }
        // A placeholder is materialized before the claim is granted (Apple: a coordinated read or
        // write of a dataless file downloads it first), and so is every placeholder inside a
        // folder or package that is read.
        if let drive = context.drive {
            let placeholders = request.items.map(\.path).filter(drive.isPlaceholder)
                + request.items.filter { !$0.access.isWrite }.map(\.path).filter(drive.holdsPlaceholders)
            if !placeholders.isEmpty {
                materialize(placeholders, drive: drive, then: request, client: client)
                return nil
            }
        }
        try context.arbiter.submit(request, from: client)
        return nil
    }

    /// Downloads the placeholders, then submits the claim; a failed download fails the claim.
    private func materialize(_ placeholders: [String], drive: DriveService, then claim: ClaimRequest, client: UInt32) {
        let arbiter = context.arbiter
        Task {
            do {
                for path in placeholders { try await drive.materialize(path) }
                try arbiter.submit(claim, from: client)
            } catch let failure as CoordinationFailure {
                self.receive([.failed(claim: claim.claim, failure: failure)])
            } catch {
                self.receive([.failed(claim: claim.claim, failure: CoordinationFailure(kind: .failed, message: "the placeholder could not be downloaded: \(error)"))])
            }
        }
    }
}
