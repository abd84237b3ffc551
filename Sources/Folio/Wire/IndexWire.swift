import FolioSystem

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
}

/// An item's facts on the wire: `{"p": path, "k": kind, "s": size, "m": modified, "t": type,
/// "g": [tags], "u": last used, "f": favorite rank, "d": downloading status, "y": sync state, "r": content
/// relevance}` (the last six only when set). The sync state of a drive item is `{"up": uploaded, "dl": downloading,
/// "pin": pinned, "err": the last error (when there is one), "pd": percent downloaded (while it
/// downloads)}`.
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
        if let relevance = facts.relevance { object["r"] = .double(relevance) }
        if let sync = facts.sync {
            var state: [String: WireValue] = ["up": .bool(sync.isUploaded), "dl": .bool(sync.isDownloading), "pin": .bool(sync.isPinned)]
            if let error = sync.error { state["err"] = .string(error) }
            if let percent = sync.percentDownloaded { state["pd"] = .double(percent) }
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
                isUploaded: uploaded, isDownloading: state["dl"]?.boolValue ?? false, isPinned: state["pin"]?.boolValue ?? false, error: state["err"]?.stringValue,
                percentDownloaded: number(state["pd"]).map { min(100, max(0, $0)) })
        }
        return MetadataFacts(
            path: path, name: path == "/" ? "/" : String(path.split(separator: "/", omittingEmptySubsequences: true).last ?? ""),
            kind: self.kind(Int(kind)), size: size, modified: modified, typeIdentifier: type, tags: tags, lastUsed: number(value["u"]),
            favoriteRank: value["f"]?.intValue, downloadingStatus: value["d"]?.stringValue, sync: sync,
            relevance: number(value["r"]).map { min(1, max(0, $0)) })
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
