import Folio
import FolioSystem
import Foundation
import Logging
import NIOCore

extension ClientSession {
    /// The access requests (docs/protocol.md, "Access"). Every one touches files or the grant
    /// table, so none runs on the event loop; bookmark resolution (and a grant list's relocation of
    /// moved items) may walk a whole tree, so those run on the slow pool.
    static let accessRoutes = [
        RequestRoute(AccessCheck.self, on: .quick) { session, request, _ in session.check(request) },
        RequestRoute(GrantList.self, on: .slow) { session, request, _ throws(CoordinationFailure) in try session.listGrants(request) },
        RequestRoute(GrantDescriptors.self, on: .slow) { session, request, _ throws(CoordinationFailure) in try session.grantDescriptors(request) },
        RequestRoute(GrantRevoke.self, on: .quick) { session, request, _ throws(CoordinationFailure) in try session.revoke(request) },
        RequestRoute(GrantAdd.self, on: .quick) { session, request, _ throws(CoordinationFailure) in
            try session.userOnly("grant access")
            return try session.context.access.grant(
                app: request.app, path: request.path, write: request.write ?? false, persistent: request.persistent ?? true, source: .user,
                session: nil
            ).wireValue(home: ClientSession.home)
        },
        RequestRoute(BookmarkCreate.self, on: .slow) { session, request, _ throws(CoordinationFailure) in try session.createBookmark(request) },
        RequestRoute(BookmarkResolve.self, on: .slow) { session, request, _ throws(CoordinationFailure) in try session.resolveBookmark(request) },
        RequestRoute(BookmarkValues.self, on: .quick) { session, request, _ throws(CoordinationFailure) in
            guard let bookmark = try? Bookmark(decoding: request.bytes, key: try session.context.access.key()) else {
                throw CoordinationFailure(kind: .corrupt, message: "not valid bookmark data")
            }
            // An app reads the values of its own bookmarks, and of the user's tools' bookmarks of
            // items it may read; another app's are not its to read.
            if let app = session.app {
                if let owner = bookmark.app {
                    guard owner == app else {
                        throw CoordinationFailure(kind: .denied, message: "this bookmark data belongs to another app", code: CocoaError.Code.fileReadNoPermission.rawValue)
                    }
                } else {
                    try session.context.access.require(app: app, path: ClientPath(bookmark.path), write: false)
                }
            }
            return ["values": .object(bookmark.values)]
        },
        RequestRoute(PickerRequest.self, on: .quick) { session, request, id throws(CoordinationFailure) in
            guard let id else { throw CoordinationFailure(kind: .invalid, message: "picker.pick is a request: give it an id") }
            try session.context.access.picker.pick(request, from: session, reply: id)
            return nil
        },
        RequestRoute(PickerAttach.self, on: .quick) { session, _, _ throws(CoordinationFailure) in
            try session.userOnly("serve as the picker")
            try session.context.access.picker.attach(session)
            return Acknowledged()
        },
        RequestRoute(PickerChoose.self, on: .quick) { session, request, _ throws(CoordinationFailure) in
            try session.context.access.picker.choose(request.request, paths: request.chosen, from: session)
            return Acknowledged()
        },
        RequestRoute(AppContainerRequest.self, on: .quick) { session, _, _ throws(CoordinationFailure) in
            guard let app = session.app else { throw CoordinationFailure(kind: .invalid, message: "this connection is not an app") }
            do { return PathReply(path: try session.context.access.catalog.container(app).url.path) } catch {
                throw CoordinationFailure(kind: .failed, message: "cannot make the container: \(error)")
            }
        },
        RequestRoute(AppSocketRequest.self, on: .quick) { session, request, id throws(CoordinationFailure) in try session.appSocket(request, id: id) },
    ]

    private static var home: String { ProcessInfo.processInfo.environment["HOME"] ?? "" }

    /// An app learns whether it may reach the path, and nothing more of a path it may not reach
    /// (not where a link leads, nor whether the item exists): the reason for a refusal goes to the
    /// daemon's log only.
    private func check(_ request: AccessCheck) -> AccessDecision {
        let path = CoordinationPath.normalize(request.path.description)
        guard let app else { return AccessDecision(allowed: true, reason: "not an app", path: path) }
        let write = request.write ?? false
        let decision = context.access.policy.check(app: app, path: ClientPath(path), write: write)
        guard decision.allowed else {
            context.logger.debug("access.check refused", metadata: ["app": "\(app)", "path": "\(path)", "reason": "\(decision.reason)"])
            return AccessDecision(allowed: false, reason: "\(app) may not \(write ? "write" : "read") it", path: path)
        }
        return AccessDecision(allowed: true, reason: decision.reason, path: path)
    }

    private func listGrants(_ request: GrantList) throws(CoordinationFailure) -> WireValue {
        if let app, request.app != nil, request.app != app { throw CoordinationFailure(kind: .denied, message: "an app sees only its own grants") }
        return ["grants": .array(context.access.currentGrants(of: app ?? request.app).map { $0.wireValue(home: ClientSession.home) })]
    }

    /// The app's live persistent grants, each opened as the item its identity check found, handed
    /// to the asking process over a one-time socket (``DescriptorHandoff``).
    private func grantDescriptors(_ request: GrantDescriptors) throws(CoordinationFailure) -> WireValue {
        try userOnly("take grant descriptors")
        let live = context.access.liveGrants(of: request.app)
        let socket = try DescriptorHandoff.offer(live.map(\.item), to: peerPID, in: context.access.catalog.paths.socketDirectory, logger: context.logger)
        return [
            "socket": .string(socket),
            "grants": .array(
                live.map { grant, item in
                    [
                        "grant": .int(grant.id), "path": .string(item.path), "access": .string(grant.allowsWriting ? "read-write" : "read"),
                        "folder": .bool(item.status.kind == .directory),
                    ]
                }),
        ]
    }

    private func revoke(_ request: GrantRevoke) throws(CoordinationFailure) -> WireValue {
        try userOnly("revoke grants")
        let real = request.path.map { (try? FileStatus.canonicalPath($0)) ?? CoordinationPath.normalize($0) }
        let removed: [Grant]
        do {
            removed = try context.access.grants.revoke { grant in
                if let number = request.grant { return grant.id == Int64(number) }
                return grant.app == request.app && (real == nil || grant.path == real)
            }
        } catch {
            throw CoordinationFailure(kind: .failed, message: "cannot revoke: \(error)")
        }
        guard !removed.isEmpty else { throw CoordinationFailure(kind: .notFound, message: "no such grant") }
        for grant in removed { context.logger.info("grant revoked", metadata: ["grant": "\(grant.id)", "app": "\(grant.app)"]) }
        return ["revoked": .array(removed.map { .int($0.id) })]
    }

    private func createBookmark(_ request: BookmarkCreate) throws(CoordinationFailure) -> BookmarkData {
        let access = context.access
        let decision = try access.require(app: app, path: request.path, write: false)
        if let app, let grant = decision?.grant, !grant.isPersistent {
            // Bookmarking a granted item keeps the grant: the app may come back to it after relaunch.
            var kept = grant
            kept.isPersistent = true
            kept.session = nil
            do { try access.grants.save(kept) } catch { throw CoordinationFailure(kind: .failed, message: "cannot keep the grant: \(error)") }
            context.logger.debug("grant kept by a bookmark", metadata: ["app": "\(app)", "grant": "\(grant.id)"])
        }
        do {
            let keys = Set((request.keys ?? []).map(URLResourceKey.init(rawValue:)))
            // An app's bookmark is made of the item its check resolved (read and marked through
            // that descriptor), whatever the path names by now.
            if let decision, let item = decision.item {
                return BookmarkData(
                    try BookmarkService.make(item: item, path: decision.path, options: request.options ?? 0, keys: keys, base: request.base, key: try access.key(), app: app))
            }
            // The user's own tools: the path opened once here.
            let item = try access.resolve(app: nil, path: request.path, write: false)
            return BookmarkData(
                try BookmarkService.make(item: item, path: request.path.description, options: request.options ?? 0, keys: keys, base: request.base, key: try access.key(), app: app))
        } catch let failure as CoordinationFailure {
            throw failure
        } catch {
            throw CoordinationFailure(kind: .notFound, message: "\(request.path): \((error as NSError).localizedDescription)")
        }
    }

    private func resolveBookmark(_ request: BookmarkResolve) throws(CoordinationFailure) -> BookmarkResolution {
        let access = context.access
        let resolution: BookmarkService.Resolution
        do {
            resolution = try BookmarkService.resolve(request.bytes, base: request.base, key: try access.key(), app: app)
        } catch let failure as CoordinationFailure {
            throw failure
        } catch let error as CocoaError where error.code == .fileReadNoPermission {
            throw CoordinationFailure(kind: .denied, message: error.localizedDescription, code: error.code.rawValue)
        } catch let error as CocoaError where error.code == .fileReadCorruptFile {
            throw CoordinationFailure(kind: .corrupt, message: error.localizedDescription)
        } catch {
            throw CoordinationFailure(kind: .notFound, message: (error as NSError).localizedDescription)
        }
        let checked: String
        do {
            checked = try access.checkedPath(app: app, path: ClientPath(resolution.path), write: false)
        } catch {
            // Not where the item is now: that is what the app may not learn.
            throw CoordinationFailure(kind: .denied, message: "\(app ?? "this app") may not reach the bookmarked item", code: error.code)
        }
        let writable = app.map { access.policy.check(app: $0, knownPath: checked, write: true).allowed } ?? true
        return BookmarkResolution(
            path: checked, stale: resolution.isStale, directory: resolution.isDirectory, readOnly: resolution.isReadOnly || !writable)
    }

    private func appSocket(_ request: AppSocketRequest, id: Int64?) throws(CoordinationFailure) -> PathReply? {
        try userOnly("open app sockets")
        guard let id else { throw CoordinationFailure(kind: .invalid, message: "app.socket is a request: give it an id") }
        guard context.access.catalog.manifest(request.app) != nil else {
            throw CoordinationFailure(kind: .notFound, message: "no app \(request.app) is registered")
        }
        try context.appSockets.socket(for: request.app).whenComplete { result in
            switch result {
            case .success(let path): self.write([WireFrame.result(.int(id), ["path": .string(path)])])
            case .failure(let error):
                self.write([WireFrame.error(.int(id), CoordinationFailure(kind: .failed, message: "cannot listen for \(request.app): \(error)"))])
            }
        }
        return nil
    }

    /// Refuses a request only the user's own tools may make.
    func userOnly(_ what: String) throws(CoordinationFailure) {
        if let app { throw CoordinationFailure(kind: .denied, message: "an app (\(app)) may not \(what)") }
    }
}
