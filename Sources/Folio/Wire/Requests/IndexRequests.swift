/// The metadata index's requests (docs/protocol.md, "Index and queries"), typed on both sides.
/// Their replies are still the index's own wire values (`IndexWire` items), so `Reply` is `WireValue`.

/// A request naming one item by its absolute path, which it normalizes.
package protocol PathRequest: DaemonRequest where Reply == WireValue {
    var path: String { get set }
}

extension PathRequest {
    package mutating func validate() throws(CoordinationFailure) { path = try WireCheck.normalizedPath(path, "params.path") }
}

/// `query.start`: a live query — results, then updates, as `query` events.
package struct QueryStart: DaemonRequest {
    package static let method = "query.start"
    package typealias Reply = WireValue

    /// The client's number for the query (events carry it).
    package var query: UInt64
    /// The predicate, in Apple's format syntax.
    package var predicate: String
    /// Folders (absolute paths) to search, resolved from Apple's scope constants.
    package var scopes: [ClientPath]
    /// Seconds updates are collected before one event reports them (1 by default).
    package var interval: Double?
    /// The predicate parsed (by `validate()`).
    private var parsed: MetadataPredicate?

    private enum CodingKeys: String, CodingKey { case query, predicate, scopes, interval }

    package init(_ spec: IndexQuerySpec) {
        query = UInt64(spec.id)
        predicate = spec.predicate.predicateFormat
        scopes = [ClientPath](spec.folders)
        interval = spec.interval
        parsed = spec.predicate
    }

    package mutating func validate() throws(CoordinationFailure) {
        try WireCheck.length(predicate, "params.predicate", limit: 16 * 1024)
        do {
            parsed = try MetadataPredicate(parsing: predicate)
        } catch {
            throw CoordinationWire.invalid("predicate: \(error.description)")
        }
        guard !scopes.isEmpty, scopes.count <= 64 else { throw CoordinationWire.invalid("scopes must be an array of 1 to 64 folders") }
        scopes = [ClientPath](try WireCheck.normalizedPaths(scopes.map(\.text), "params.scopes", limit: 64))
        guard (0...3600).contains(interval ?? 1) else { throw CoordinationWire.invalid("interval must be 0 to 3600 seconds") }
    }

    /// The query as the daemon runs it (after `validate()`), over `folders`: its scopes as their
    /// checks resolved them.
    package func spec(folders: [String]) -> IndexQuerySpec {
        IndexQuerySpec(
            id: Int64(query), predicate: parsed ?? (try? MetadataPredicate(parsing: predicate)) ?? .falsePredicate,
            folders: folders, interval: interval ?? 1)
    }
}

/// `query.stop`: stops live query `query`.
package struct QueryStop: DaemonRequest {
    package static let method = "query.stop"
    package typealias Reply = WireValue
    package var query: UInt64
    package init(query: UInt64) { self.query = query }
}

/// `search`: names containing `text`, best first, at most `limit` (50 by default); with
/// `content`, then documents whose text holds words beginning with each of the text's words
/// (bm25 order), each with a snippet; `folders` keeps the results inside them.
package struct Search: DaemonRequest {
    package static let method = "search"
    package typealias Reply = WireValue
    package var text: String
    package var limit: Int?
    package var content: Bool?
    package var folders: [ClientPath]?

    package init(text: String, limit: Int? = nil, content: Bool? = nil, folders: [String]? = nil) {
        self.text = text
        self.limit = limit
        self.content = content
        self.folders = folders.map { [ClientPath]($0) }
    }

    package mutating func validate() throws(CoordinationFailure) {
        try WireCheck.length(text, "params.text", limit: 1024)
        guard !text.isEmpty else { throw CoordinationWire.invalid("params.text must not be empty") }
        try WireCheck.limit(limit)
        if let folders { self.folders = [ClientPath](try WireCheck.normalizedPaths(folders.map(\.text), "params.folders", limit: 64)) }
    }
}

/// `index.status`: what the index holds and is doing.
package struct IndexStatus: DaemonRequest {
    package static let method = "index.status"
    package typealias Reply = WireValue
    package init() {}
}

/// `index.add`: adds a root the user chose.
package struct IndexAdd: PathRequest {
    package static let method = "index.add"
    package var path: String
    package init(path: String) { self.path = path }
}

/// `index.remove`: removes a root.
package struct IndexRemove: PathRequest {
    package static let method = "index.remove"
    package var path: String
    package init(path: String) { self.path = path }
}

/// `index.exclude`: leaves a folder out of the index: everything in it, or with `text` only its
/// documents' text.
package struct IndexExclude: PathRequest {
    package static let method = "index.exclude"
    package var path: String
    package var text: Bool?
    package init(path: String, text: Bool? = nil) {
        self.path = path
        self.text = text
    }
}

/// `index.include`: indexes a folder the user excluded again.
package struct IndexInclude: PathRequest {
    package static let method = "index.include"
    package var path: String
    package init(path: String) { self.path = path }
}

/// `index.rebuild`: forgets everything and crawls again.
package struct IndexRebuild: DaemonRequest {
    package static let method = "index.rebuild"
    package typealias Reply = WireValue
    package init() {}
}

/// `index.overflow`: acts as if inotify lost events (tests).
package struct IndexOverflow: DaemonRequest {
    package static let method = "index.overflow"
    package typealias Reply = WireValue
    package init() {}
}

/// `recents`: the items used most recently, at most `limit` (50 by default).
package struct Recents: DaemonRequest {
    package static let method = "recents"
    package typealias Reply = WireValue
    package var limit: Int?
    package init(limit: Int? = nil) { self.limit = limit }
    package func validate() throws(CoordinationFailure) { try WireCheck.limit(limit) }
}

/// `recents.add`: records that an item was opened, created or modified.
package struct RecentsAdd: DaemonRequest {
    package static let method = "recents.add"
    package typealias Reply = WireValue
    package var path: ClientPath
    /// `opened`, `created` or `modified`.
    package var event: String

    package init(path: String, event: String) {
        self.path = ClientPath(path)
        self.event = event
    }

    package mutating func validate() throws(CoordinationFailure) {
        guard ["opened", "created", "modified"].contains(event) else { throw CoordinationWire.invalid("params.event must be opened, created or modified") }
        path = ClientPath(try WireCheck.normalizedPath(path.text, "params.path"))
    }
}

/// `favorites`: the favorite folders.
package struct Favorites: DaemonRequest {
    package static let method = "favorites"
    package typealias Reply = WireValue
    package init() {}
}

/// `favorites.add`: adds a favorite folder.
package struct FavoritesAdd: PathRequest {
    package static let method = "favorites.add"
    package var path: String
    package init(path: String) { self.path = path }
}

/// `favorites.remove`: removes a favorite folder.
package struct FavoritesRemove: PathRequest {
    package static let method = "favorites.remove"
    package var path: String
    package init(path: String) { self.path = path }
}

/// `item`: what the index knows of one item (`{"item": …}` or `{"item": null}`).
package struct ItemFacts: DaemonRequest {
    package static let method = "item"
    package typealias Reply = WireValue
    package var path: ClientPath
    package init(path: String) { self.path = ClientPath(path) }
    package mutating func validate() throws(CoordinationFailure) { path = ClientPath(try WireCheck.normalizedPath(path.text, "params.path")) }
}
