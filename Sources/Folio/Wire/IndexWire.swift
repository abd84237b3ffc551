import FolioSystem

/// Requests to the daemon's metadata index (docs/protocol.md, "Index and queries").
package enum IndexRequest: Sendable, Equatable {
    /// Starts a live query: results, then updates, as `query` events.
    case startQuery(IndexQuerySpec)
    /// Stops a live query.
    case stopQuery(id: Int64)
    /// Names containing `text`, best first.
    case search(text: String, limit: Int)
    /// What the index holds and is doing.
    case status
    /// Adds or removes a root the user chose; forgets everything and crawls again.
    case addRoot(String)
    case removeRoot(String)
    case rebuild
    /// The items used most recently.
    case recents(limit: Int)
    /// Records that an item was opened, created or modified.
    case used(path: String, event: String)
    /// The favorite folders; adding and removing.
    case favorites
    case addFavorite(String)
    case removeFavorite(String)
    /// What the index knows of one item (promised items whose content is not local).
    case item(String)
    /// Acts as if inotify lost events (tests).
    case simulateOverflow

    /// Decodes an index method's typed request; nil when `method` is not one.
    package init?(method: String, params: WireValue?) throws(CoordinationFailure) {
        switch method {
        case QueryStart.method: self = .startQuery(try QueryStart(params: params).spec)
        case QueryStop.method: self = .stopQuery(id: Int64(try QueryStop(params: params).query))
        case Search.method:
            let search = try Search(params: params)
            self = .search(text: search.text, limit: search.limit ?? 50)
        case IndexStatus.method: self = .status
        case IndexAdd.method: self = .addRoot(try IndexAdd(params: params).path)
        case IndexRemove.method: self = .removeRoot(try IndexRemove(params: params).path)
        case IndexRebuild.method: self = .rebuild
        case IndexOverflow.method: self = .simulateOverflow
        case Recents.method: self = .recents(limit: try Recents(params: params).limit ?? 50)
        case RecentsAdd.method:
            let used = try RecentsAdd(params: params)
            self = .used(path: used.path, event: used.event)
        case Favorites.method: self = .favorites
        case FavoritesAdd.method: self = .addFavorite(try FavoritesAdd(params: params).path)
        case FavoritesRemove.method: self = .removeFavorite(try FavoritesRemove(params: params).path)
        case ItemFacts.method: self = .item(try ItemFacts(params: params).path)
        default: return nil
        }
    }
}

/// A live query as the daemon receives it.
package struct IndexQuerySpec: Sendable, Equatable {
    /// The client's number for the query (events carry it).
    package var id: Int64
    /// The predicate, in Apple's format syntax (parsed and checked by the daemon).
    package var predicate: MetadataPredicate
    /// Folders (absolute paths) to search; already resolved from Apple's scope constants.
    package var folders: [String]
    /// How long updates are collected before one event reports them.
    package var interval: Double

    package init(id: Int64, predicate: MetadataPredicate, folders: [String], interval: Double) {
        self.id = id
        self.predicate = predicate
        self.folders = folders
        self.interval = interval
    }

    package var wireValue: WireValue {
        [
            "query": .int(id), "predicate": .string(predicate.predicateFormat), "scopes": .array(folders.map { .string($0) }),
            "interval": .double(interval),
        ]
    }

    init(wire params: WireValue) throws(CoordinationFailure) {
        typealias W = CoordinationWire
        id = Int64(try W.number(params, "query"))
        let format = try W.string(params, "predicate", limit: 16 * 1024)
        do {
            predicate = try MetadataPredicate(format: format, argumentArray: nil)
        } catch {
            throw W.invalid("predicate: \(error.description)")
        }
        guard let scopes = params["scopes"]?.arrayValue, !scopes.isEmpty, scopes.count <= 64 else {
            throw W.invalid("scopes must be an array of 1 to 64 folders")
        }
        var folders: [String] = []
        for scope in scopes {
            guard let path = scope.stringValue, path.hasPrefix("/"), path.utf8.count <= 4096, !path.utf8.contains(0) else {
                throw W.invalid("each scope must be an absolute path")
            }
            folders.append(CoordinationPath.normalize(path))
        }
        self.folders = folders
        let interval: Double
        switch params["interval"] {
        case nil: interval = 1
        case .int(let value)?: interval = Double(value)
        case .double(let value)?: interval = value
        default: throw W.invalid("interval must be a number of seconds")
        }
        guard interval >= 0, interval <= 3600 else { throw W.invalid("interval must be 0 to 3600 seconds") }
        self.interval = interval
    }
}

/// An item's facts on the wire: `{"p": path, "k": kind, "s": size, "m": modified, "t": type,
/// "g": [tags], "u": last used, "f": favorite rank, "d": downloading status, "y": sync state}` (the
/// last five only when set). The sync state of a drive item is `{"up": uploaded, "dl": downloading,
/// "pin": pinned, "err": the last error (when there is one)}`.
package enum IndexWire {
    package static func encode(_ facts: MetadataFacts) -> WireValue {
        var object: [String: WireValue] = [
            "p": .string(facts.path), "k": .int(Int64(kindCode(facts.kind))), "s": .int(facts.size), "m": .double(facts.modified),
            "t": .string(facts.typeIdentifier ?? facts.type.identifier),
        ]
        if let tags = facts.tags, !tags.isEmpty { object["g"] = .array(tags.map { .string($0) }) }
        if let used = facts.lastUsed { object["u"] = .double(used) }
        if let rank = facts.favoriteRank { object["f"] = .int(rank) }
        if let status = facts.downloadingStatus { object["d"] = .string(status) }
        if let sync = facts.sync {
            var state: [String: WireValue] = ["up": .bool(sync.isUploaded), "dl": .bool(sync.isDownloading), "pin": .bool(sync.isPinned)]
            if let error = sync.error { state["err"] = .string(error) }
            object["y"] = .object(state)
        }
        return .object(object)
    }

    /// The facts of a wire item; nil when it is malformed.
    package static func decode(_ value: WireValue) -> MetadataFacts? {
        guard let path = value["p"]?.stringValue, path.hasPrefix("/"), let kind = value["k"]?.intValue, let size = value["s"]?.intValue,
            let modified = number(value["m"]), let type = value["t"]?.stringValue
        else { return nil }
        let tags = value["g"]?.arrayValue?.compactMap(\.stringValue) ?? []
        var sync: UbiquitousSyncState?
        if let state = value["y"] {
            guard let uploaded = state["up"]?.boolValue else { return nil }
            sync = UbiquitousSyncState(
                isUploaded: uploaded, isDownloading: state["dl"]?.boolValue ?? false, isPinned: state["pin"]?.boolValue ?? false, error: state["err"]?.stringValue)
        }
        return MetadataFacts(
            path: path, name: path == "/" ? "/" : String(path.split(separator: "/", omittingEmptySubsequences: true).last ?? ""),
            kind: self.kind(Int(kind)), size: size, modified: modified, typeIdentifier: type, tags: tags, lastUsed: number(value["u"]),
            favoriteRank: value["f"]?.intValue, downloadingStatus: value["d"]?.stringValue, sync: sync)
    }

    private static func number(_ value: WireValue?) -> Double? {
        switch value {
        case .int(let number)?: Double(number)
        case .double(let number)?: number
        default: nil
        }
    }

    package static func kindCode(_ kind: FileStatus.Kind) -> Int {
        switch kind {
        case .regular: 0
        case .directory: 1
        case .symbolicLink: 2
        default: 3
        }
    }

    package static func kind(_ code: Int) -> FileStatus.Kind {
        switch code {
        case 0: .regular
        case 1: .directory
        case 2: .symbolicLink
        default: .other
        }
    }
}
