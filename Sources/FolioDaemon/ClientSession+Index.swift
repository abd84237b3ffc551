import Folio
import Foundation

extension ClientSession: QueryEventSink {
    /// The index's requests (docs/protocol.md, "Index and queries"). Access is checked on the
    /// connection's side (on a pool for an app, whose paths are checked on disk); the work runs on
    /// the index's queue and its reply is written from there, so a long crawl step never holds up
    /// the event loop (and every other client's coordination).
    static let indexRoutes = [
        RequestRoute(QueryStart.self, placement: { session, _ in session.appChecksPlacement }) { session, request, id throws(CoordinationFailure) in
            // Each folder as its check resolved it: a link swapped in later leads the query nowhere.
            let folders = try request.scopes.map { folder throws(CoordinationFailure) in
                try session.context.access.checkedPath(app: session.app, path: folder, write: false)
            }
            session.context.index.startQuery(request.spec(folders: folders), requestID: id, sink: session)
            return nil
        },
        RequestRoute(QueryStop.self, on: .eventLoop) { session, request, _ in
            session.context.index.stopQuery(Int64(request.query), sink: session)
            return [:]
        },
        RequestRoute(Search.self, placement: { session, _ in session.appChecksPlacement }) { session, request, id throws(CoordinationFailure) in
            let folders = try (request.folders ?? []).map { folder throws(CoordinationFailure) in
                try session.context.access.checkedPath(app: session.app, path: folder, write: false)
            }
            return session.onIndexQueue(id) { index in
                let hits = try index.search(
                    request.text, content: request.content ?? false, folders: folders, limit: request.limit ?? 50, allowed: session.visible)
                return [
                    "items": .array(
                        hits.map { hit in
                            let item = IndexWire.encode(hit.record.facts)
                            guard let snippet = hit.snippet, case .object(var object) = item else { return item }
                            object["snippet"] = .string(snippet)
                            return .object(object)
                        })
                ]
            }
        },
        RequestRoute(IndexStatus.self, on: .eventLoop) { session, _, id throws(CoordinationFailure) in
            try session.userOnly("read the index's status")
            // The counts are read off the index's queue: a status asked for again and again (a
            // script waiting for a crawl) never holds up the crawl's steps (60 ms a status at a
            // million items).
            let index = session.context.index
            index.work.async {
                let snapshot = index.statusSnapshot()
                index.statusWork.async { session.reply(id) { try index.status(snapshot) } }
            }
            return nil
        },
        RequestRoute(IndexAdd.self, on: .eventLoop) { session, request, id throws(CoordinationFailure) in
            try session.userOnly("change what is indexed")
            return session.onIndexQueue(id) { index in
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: request.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw CoordinationFailure(kind: .notFound, message: "\(request.path) is not a folder")
                }
                try index.addRoot(request.path)
                return [:]
            }
        },
        RequestRoute(IndexRemove.self, on: .eventLoop) { session, request, id throws(CoordinationFailure) in
            try session.userOnly("change what is indexed")
            return session.onIndexQueue(id) { index in
                guard try index.removeRoot(request.path) else {
                    throw CoordinationFailure(kind: .notFound, message: "\(request.path) is not a folder added to the index")
                }
                return [:]
            }
        },
        RequestRoute(IndexExclude.self, on: .eventLoop) { session, request, id throws(CoordinationFailure) in
            try session.userOnly("change what is indexed")
            return session.onIndexQueue(id) { index in
                try index.exclude(request.path, textOnly: request.text ?? false)
                return [:]
            }
        },
        RequestRoute(IndexInclude.self, on: .eventLoop) { session, request, id throws(CoordinationFailure) in
            try session.userOnly("change what is indexed")
            return session.onIndexQueue(id) { index in
                guard try index.include(request.path) else {
                    throw CoordinationFailure(kind: .notFound, message: "\(request.path) is not a folder excluded from the index")
                }
                return [:]
            }
        },
        RequestRoute(IndexRebuild.self, on: .eventLoop) { session, _, id throws(CoordinationFailure) in
            try session.userOnly("rebuild the index")
            return session.onIndexQueue(id) { index in
                try index.rebuild()
                return [:]
            }
        },
        RequestRoute(IndexOverflow.self, on: .eventLoop) { session, _, id throws(CoordinationFailure) in
            try session.userOnly("change the index")
            return session.onIndexQueue(id) { index in
                index.simulateOverflow()
                return [:]
            }
        },
        RequestRoute(Recents.self, on: .eventLoop) { session, request, id in
            session.onIndexQueue(id) { index in
                let limit = request.limit ?? 50
                let recents = try index.recents(limit: limit * 2).filter { session.visible($0.path) }.prefix(limit)
                return ["items": .array(recents.map(ClientSession.wireValue(of:)))]
            }
        },
        RequestRoute(RecentsAdd.self, placement: { session, _ in session.appChecksPlacement }) { session, request, id throws(CoordinationFailure) in
            let path = try session.context.access.checkedPath(app: session.app, path: request.path, write: false)
            return session.onIndexQueue(id) { index in
                try index.recordUse(path, event: request.event, app: session.app)
                return [:]
            }
        },
        RequestRoute(Favorites.self, on: .eventLoop) { session, _, id in
            session.onIndexQueue(id) { index in
                ["items": .array(try index.favorites().filter { session.visible($0.path) }.map { ["path": .string($0.path), "rank": .int($0.rank)] })]
            }
        },
        RequestRoute(FavoritesAdd.self, on: .eventLoop) { session, request, id throws(CoordinationFailure) in
            try session.userOnly("change the favorites")
            return session.onIndexQueue(id) { index in
                try index.addFavorite(request.path)
                return [:]
            }
        },
        RequestRoute(FavoritesRemove.self, on: .eventLoop) { session, request, id throws(CoordinationFailure) in
            try session.userOnly("change the favorites")
            return session.onIndexQueue(id) { index in
                guard try index.removeFavorite(request.path) else { throw CoordinationFailure(kind: .notFound, message: "\(request.path) is not a favorite") }
                return [:]
            }
        },
        RequestRoute(ItemFacts.self, placement: { session, _ in session.appChecksPlacement }) { session, request, id throws(CoordinationFailure) in
            let path = try session.context.access.checkedPath(app: session.app, path: request.path, write: false)
            return session.onIndexQueue(id) { index in
                guard let record = try index.item(at: path) else {
                    throw CoordinationFailure(kind: .notFound, message: "the index has no \(request.path)")
                }
                return ["item": IndexWire.encode(record.facts)]
            }
        },
    ]

    /// For a request whose paths an app's grants are checked against (realpath, stat): a pool for
    /// an app, the event loop for the user's own tools (which are not checked).
    var appChecksPlacement: RequestPlacement { declaredApp != nil ? .quick : .eventLoop }

    /// Runs `work` on the index's queue and writes its reply (or its error) from there. Returns
    /// nil: the reply always comes later. A notification gets a reply only when it failed.
    private func onIndexQueue(_ id: Int64?, _ work: @escaping @Sendable (MetadataIndex) throws -> WireValue) -> WireValue? {
        let index = context.index
        index.work.async { [self] in reply(id) { try work(index) } }
        return nil
    }

    /// Writes the reply to request `id` that `work` makes, or its error (a notification's only
    /// when it failed), on the caller's queue.
    private func reply(_ id: Int64?, _ work: () throws -> WireValue) {
        let replyID = id.map { WireValue.int($0) } ?? .null
        let reply: WireValue
        do {
            reply = WireFrame.result(replyID, try work())
        } catch let failure as CoordinationFailure {
            reply = WireFrame.error(replyID, failure)
        } catch {
            reply = WireFrame.error(replyID, CoordinationFailure(kind: .failed, message: "the index failed: \(error)"))
        }
        if id != nil || reply["error"] != nil { write([reply]) }
    }

    private static func wireValue(of recent: (path: String, used: Double, event: String, app: String?, source: String, record: IndexRecord?)) -> WireValue {
        var item: [String: WireValue] = [
            "path": .string(recent.path), "used": .double(recent.used), "event": .string(recent.event), "source": .string(recent.source),
        ]
        if let app = recent.app { item["app"] = .string(app) }
        if let record = recent.record { item["item"] = IndexWire.encode(record.facts) }
        return .object(item)
    }

    /// Whether this connection may see `path` (everything for the user's own tools).
    private func visible(_ path: String) -> Bool {
        guard let app else { return true }
        return context.access.policy.check(app: app, knownPath: path, write: false).allowed
    }
}
