import Folio
import Foundation

extension ClientSession: QueryEventSink {
    /// Runs an index request (docs/protocol.md, "Index and queries"); nil when the reply comes
    /// later (a query's, after the index has caught up).
    func index(_ request: IndexRequest, id: Int64?) throws(CoordinationFailure) -> WireValue? {
        let index = context.index
        do {
            switch request {
            case .startQuery(let spec):
                for folder in spec.folders { _ = try context.access.require(app: app, path: folder, write: false) }
                index.startQuery(spec, requestID: id, sink: self)
                return nil
            case .stopQuery(let query):
                index.stopQuery(query, sink: self)
            case .search(let text, let limit):
                let results = try index.search(text, limit: limit, allowed: visible)
                return ["items": .array(results.map { IndexWire.encode($0.facts) })]
            case .status:
                try userOnly("read the index's status")
                return try index.status()
            case .addRoot(let path):
                try userOnly("change what is indexed")
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw CoordinationFailure(kind: .notFound, message: "\(path) is not a folder")
                }
                try index.addRoot(path)
            case .removeRoot(let path):
                try userOnly("change what is indexed")
                guard try index.removeRoot(path) else {
                    throw CoordinationFailure(kind: .notFound, message: "\(path) is not a folder added to the index")
                }
            case .rebuild:
                try userOnly("rebuild the index")
                try index.rebuild()
            case .simulateOverflow:
                try userOnly("disturb the index")
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
                _ = try context.access.require(app: app, path: path, write: false)
                try index.recordUse(path, event: event, app: app)
            case .favorites:
                return ["items": .array(try index.favorites().filter { visible($0.path) }.map { ["path": .string($0.path), "rank": .int($0.rank)] })]
            case .addFavorite(let path):
                try userOnly("change the favorites")
                try index.addFavorite(path)
            case .removeFavorite(let path):
                try userOnly("change the favorites")
                guard try index.removeFavorite(path) else { throw CoordinationFailure(kind: .notFound, message: "\(path) is not a favorite") }
            case .item(let path):
                _ = try context.access.require(app: app, path: path, write: false)
                guard let record = try index.item(at: path) else { throw CoordinationFailure(kind: .notFound, message: "the index has no \(path)") }
                return ["item": IndexWire.encode(record.facts)]
            }
        } catch let failure as CoordinationFailure {
            throw failure
        } catch {
            throw CoordinationFailure(kind: .failed, message: "the index failed: \(error)")
        }
        return [:]
    }

    /// Whether this connection may see `path` (everything for the user's own tools).
    private func visible(_ path: String) -> Bool {
        guard let app else { return true }
        return context.access.policy.check(app: app, path: path, write: false).allowed
    }
}
