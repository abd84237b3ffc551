import Folio
import Foundation

extension ClientSession: QueryEventSink {
    /// Runs an index request (docs/protocol.md, "Index and queries"). Access is checked here; the
    /// work runs on the index's queue and its reply is written from there, so a long crawl step
    /// never holds up the connection's event loop (and every other client's coordination). Returns
    /// nil: the reply always comes later.
    func index(_ request: IndexRequest, id: Int64?) throws(CoordinationFailure) -> WireValue? {
        let index = context.index
        switch request {
        case .startQuery(let spec):
            for folder in spec.folders { _ = try context.access.require(app: app, path: folder, write: false) }
            index.startQuery(spec, requestID: id, sink: self)
            return nil
        case .stopQuery(let query):
            index.stopQuery(query, sink: self)
            return [:]
        case .status, .rebuild, .simulateOverflow: try userOnly("read or change the index")
        case .addRoot, .removeRoot: try userOnly("change what is indexed")
        case .addFavorite, .removeFavorite: try userOnly("change the favorites")
        case .used(let path, _), .item(let path): _ = try context.access.require(app: app, path: path, write: false)
        case .search, .recents, .favorites: break
        }
        index.work.async { [self] in
            let reply: WireValue
            do {
                let result = try run(request)
                reply = WireFrame.result(id.map { .int($0) } ?? .null, result)
            } catch let failure as CoordinationFailure {
                reply = WireFrame.error(id.map { .int($0) } ?? .null, failure)
            } catch {
                reply = WireFrame.error(
                    id.map { .int($0) } ?? .null, CoordinationFailure(kind: .failed, message: "the index failed: \(error)"))
            }
            // A notification gets a reply only when it failed.
            if id != nil || reply["error"] != nil { write([reply]) }
        }
        return nil
    }

    /// The work of an index request, on the index's queue.
    private func run(_ request: IndexRequest) throws -> WireValue {
        let index = context.index
        switch request {
        case .startQuery, .stopQuery:
            return [:]
        case .search(let text, let limit):
            let results = try index.search(text, limit: limit, allowed: visible)
            return ["items": .array(results.map { IndexWire.encode($0.facts) })]
        case .status:
            return try index.status()
        case .addRoot(let path):
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CoordinationFailure(kind: .notFound, message: "\(path) is not a folder")
            }
            try index.addRoot(path)
        case .removeRoot(let path):
            guard try index.removeRoot(path) else {
                throw CoordinationFailure(kind: .notFound, message: "\(path) is not a folder added to the index")
            }
        case .rebuild:
            try index.rebuild()
        case .simulateOverflow:
            index.simulateOverflow()
        case .recents(let limit):
            let recents = try index.recents(limit: limit * 2).filter { visible($0.path) }.prefix(limit)
            return [
                "items": .array(
                    recents.map { recent in
                        var item: [String: WireValue] = [
                            "path": .string(recent.path), "used": .double(recent.used), "event": .string(recent.event),
                            "source": .string(recent.source),
                        ]
                        if let app = recent.app { item["app"] = .string(app) }
                        if let record = recent.record { item["item"] = IndexWire.encode(record.facts) }
                        return .object(item)
                    })
            ]
        case .used(let path, let event):
            try index.recordUse(path, event: event, app: app)
        case .favorites:
            return ["items": .array(try index.favorites().filter { visible($0.path) }.map { ["path": .string($0.path), "rank": .int($0.rank)] })]
        case .addFavorite(let path):
            try index.addFavorite(path)
        case .removeFavorite(let path):
            guard try index.removeFavorite(path) else { throw CoordinationFailure(kind: .notFound, message: "\(path) is not a favorite") }
        case .item(let path):
            guard let record = try index.item(at: path) else { throw CoordinationFailure(kind: .notFound, message: "the index has no \(path)") }
            return ["item": IndexWire.encode(record.facts)]
        }
        return [:]
    }

    /// Whether this connection may see `path` (everything for the user's own tools).
    private func visible(_ path: String) -> Bool {
        guard let app else { return true }
        return context.access.policy.check(app: app, path: path, write: false).allowed
    }
}
