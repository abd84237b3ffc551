package import Foundation

/// The access requests (docs/protocol.md, "Access"): grants, bookmarks, the picker and apps'
/// containers and sockets.

/// `access.check`: may this connection's app reach `path` (for writing)?
package struct AccessCheck: DaemonRequest {
    package static let method = "access.check"
    package typealias Reply = AccessDecision
    package var path: ClientPath
    package var write: Bool?

    package init(path: String, write: Bool = false) {
        self.path = ClientPath(path)
        self.write = write
    }

    package func validate() throws(CoordinationFailure) { try WireCheck.absolutePath(path.text, "params.path") }
}

/// The daemon's answer to `access.check`.
package struct AccessDecision: Codable, Sendable {
    package var allowed: Bool
    /// Why (the grant or rule that decided).
    package var reason: String
    /// The path as checked (symbolic links resolved).
    package var path: String

    package init(allowed: Bool, reason: String, path: String) {
        self.allowed = allowed
        self.reason = reason
        self.path = path
    }
}

/// `grant.list`: the grants of `app` (all apps: nil); an app sees only its own.
package struct GrantList: DaemonRequest {
    package static let method = "grant.list"
    package typealias Reply = WireValue
    package var app: String?
    package init(app: String?) { self.app = app }
    package func validate() throws(CoordinationFailure) { if let app { try WireCheck.app(app, "params.app") } }
}

/// `grant.descriptors`: the live persistent grants of `app`, each opened by the daemon as the
/// item its identity check found, for `folio run --sandbox` to bind by descriptor. The reply names
/// a one-time socket in the daemon's socket folder; the requesting process (no other) connects
/// to it within ten seconds and receives the descriptors (SCM_RIGHTS), in the reply's order. The
/// user's own tools only.
package struct GrantDescriptors: DaemonRequest {
    package static let method = "grant.descriptors"
    package typealias Reply = WireValue
    package var app: String
    package init(app: String) { self.app = app }
    package func validate() throws(CoordinationFailure) { try WireCheck.app(app, "params.app") }
}

/// `grant.revoke`: revokes grant `grant`, or every grant of `app` (to `path`). The user's own tools only.
package struct GrantRevoke: DaemonRequest {
    package static let method = "grant.revoke"
    package typealias Reply = WireValue
    package var grant: UInt64?
    package var app: String?
    package var path: String?

    package init(grant: UInt64? = nil, app: String? = nil, path: String? = nil) {
        self.grant = grant
        self.app = app
        self.path = path
    }

    package func validate() throws(CoordinationFailure) {
        if let app { try WireCheck.app(app, "params.app") }
        if let path { try WireCheck.absolutePath(path, "params.path") }
        guard grant != nil || app != nil else { throw CoordinationWire.invalid("grant.revoke needs a grant number, or an app (and a path)") }
    }
}

/// `grant.add`: grants `app` the item at `path` (`folio open`, `folio grants add`: the user's own tools only).
package struct GrantAdd: DaemonRequest {
    package static let method = "grant.add"
    package typealias Reply = WireValue
    package var app: String
    package var path: String
    package var write: Bool?
    /// Kept across the app's launches (the default), or for its session only.
    package var persistent: Bool?

    package init(app: String, path: String, write: Bool, persistent: Bool) {
        self.app = app
        self.path = path
        self.write = write
        self.persistent = persistent
    }

    package func validate() throws(CoordinationFailure) {
        try WireCheck.app(app, "params.app")
        try WireCheck.absolutePath(path, "params.path")
    }
}

/// `bookmark.create`: signed bookmark data for the item at `path`.
package struct BookmarkCreate: DaemonRequest {
    package static let method = "bookmark.create"
    package typealias Reply = BookmarkData
    package var path: ClientPath
    /// `URL.BookmarkCreationOptions` raw bits.
    package var options: UInt?
    /// Resource keys whose values the bookmark stores.
    package var keys: [String]?
    /// The document a document-relative bookmark is relative to.
    package var base: String?

    package init(path: String, options: UInt, keys: [String], base: String?) {
        self.path = ClientPath(path)
        self.options = options
        self.keys = keys
        self.base = base
    }

    package func validate() throws(CoordinationFailure) {
        try WireCheck.absolutePath(path.text, "params.path")
        if let base { try WireCheck.absolutePath(base, "params.base") }
        if let keys { try WireCheck.strings(keys, "params.keys", limit: 64, each: 256) }
    }
}

/// Bookmark data as the wire carries it: base64.
package struct BookmarkData: Codable, Sendable {
    package var data: String

    /// The largest bookmark accepted on the wire, base64 included.
    package static let maximumBytes = 96 << 10

    package init(_ data: Data) { self.data = data.base64EncodedString() }

    /// The bytes of `text`; an error names `name` when it is too long or not base64.
    static func decode(_ text: String, _ name: String) throws(CoordinationFailure) -> Data {
        try WireCheck.length(text, name, limit: maximumBytes)
        guard let bytes = Data(base64Encoded: text) else { throw CoordinationWire.invalid("\(name) must be base64") }
        return bytes
    }
}

/// `bookmark.resolve`: checks and resolves bookmark data.
package struct BookmarkResolve: DaemonRequest {
    package static let method = "bookmark.resolve"
    package typealias Reply = BookmarkResolution
    package var data: String
    package var base: String?
    /// The bookmark's bytes, decoded by `validate()`.
    package private(set) var bytes = Data()

    private enum CodingKeys: String, CodingKey { case data, base }

    package init(data: Data, base: String?) {
        self.data = data.base64EncodedString()
        self.base = base
        bytes = data
    }

    package mutating func validate() throws(CoordinationFailure) {
        bytes = try BookmarkData.decode(data, "params.data")
        if let base { try WireCheck.absolutePath(base, "params.base") }
    }
}

/// Where resolved bookmark data points.
package struct BookmarkResolution: Codable, Sendable {
    package var path: String
    /// The item was found elsewhere than recorded: make new bookmark data.
    package var stale: Bool
    package var directory: Bool
    /// The bookmark, or the app's grant, allows reading only.
    package var readOnly: Bool

    package init(path: String, stale: Bool, directory: Bool, readOnly: Bool) {
        self.path = path
        self.stale = stale
        self.directory = directory
        self.readOnly = readOnly
    }
}

/// `bookmark.values`: the resource values stored in bookmark data.
package struct BookmarkValues: DaemonRequest {
    package static let method = "bookmark.values"
    package typealias Reply = WireValue
    package var data: String
    /// The bookmark's bytes, decoded by `validate()`.
    package private(set) var bytes = Data()

    private enum CodingKeys: String, CodingKey { case data }

    package init(data: Data) {
        self.data = data.base64EncodedString()
        bytes = data
    }

    package mutating func validate() throws(CoordinationFailure) { bytes = try BookmarkData.decode(data, "params.data") }
}

/// What the document picker is asked to do (apple-semantics §5.1).
package enum PickerMode: String, Sendable, CaseIterable, Codable {
    /// Copy the chosen documents into the app's temporary folder (`asCopy: true`).
    case `import`
    /// Hand out the chosen originals, security-scoped (`asCopy: false`).
    case open
    /// Copy the app's documents to a folder the user chooses.
    case export
    /// Move the app's documents to a folder the user chooses.
    case move

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let mode = PickerMode(rawValue: text) else { throw CoordinationWire.invalid("mode must be one of import, open, export, move") }
        self = mode
    }
}

/// `picker.pick`: runs the document picker for this connection's app; the reply comes when the
/// person answers (the chosen items) or cancels. The daemon hands the same request to the front end.
package struct PickerRequest: DaemonRequest, Equatable {
    package static let method = "picker.pick"
    package typealias Reply = WireValue

    package var mode: PickerMode
    /// Type identifiers the chosen items must conform to (open and import); empty: any.
    package var types: [String]
    package var allowsMultipleSelection: Bool
    /// The folder to start in.
    package var directory: String?
    /// The documents to export or move.
    package var urls: [ClientPath]
    package var showsFileExtensions: Bool

    private enum CodingKeys: String, CodingKey {
        case mode, types, directory, urls
        case allowsMultipleSelection = "multiple"
        case showsFileExtensions = "extensions"
    }

    package init(
        mode: PickerMode, types: [String] = [], allowsMultipleSelection: Bool = false, directory: String? = nil, urls: [String] = [],
        showsFileExtensions: Bool = false
    ) {
        self.mode = mode
        self.types = types
        self.allowsMultipleSelection = allowsMultipleSelection
        self.directory = directory
        self.urls = [ClientPath](urls)
        self.showsFileExtensions = showsFileExtensions
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mode = try container.decode(PickerMode.self, forKey: .mode)
        types = try container.decodeIfPresent([String].self, forKey: .types) ?? []
        allowsMultipleSelection = try container.decodeIfPresent(Bool.self, forKey: .allowsMultipleSelection) ?? false
        directory = try container.decodeIfPresent(String.self, forKey: .directory)
        urls = try container.decodeIfPresent([ClientPath].self, forKey: .urls) ?? []
        showsFileExtensions = try container.decodeIfPresent(Bool.self, forKey: .showsFileExtensions) ?? false
    }

    /// The request's wire form, as the daemon hands it to the front end (strings and flags only,
    /// which always encode).
    package var wireValue: WireValue { (try? encodedParams()) ?? [:] }

    package mutating func validate() throws(CoordinationFailure) {
        try WireCheck.strings(types, "params.types", limit: 256, each: 1024, what: "identifiers")
        directory = try WireCheck.optionalNormalizedPath(directory, "params.directory")
        urls = [ClientPath](try WireCheck.normalizedPaths(urls.map(\.text), "params.urls", limit: 4096))
        if mode == .export || mode == .move {
            guard !urls.isEmpty else { throw CoordinationWire.invalid("\(mode.rawValue) needs the documents to \(mode.rawValue) in urls") }
        }
    }
}

/// `picker.attach`: this connection becomes the picker's front end (the user's own tools only).
package struct PickerAttach: DaemonRequest {
    package static let method = "picker.attach"
    package typealias Reply = Acknowledged
    package init() {}
}

/// `picker.choose`: the front end's answer to picker request `request`: the chosen paths (a
/// destination folder for export and move), or `cancel`.
package struct PickerChoose: DaemonRequest {
    package static let method = "picker.choose"
    package typealias Reply = Acknowledged
    package var request: UInt64
    package var paths: [String]?
    package var cancel: Bool?

    package init(request: UInt64, paths: [String]?) {
        self.request = request
        self.paths = paths
        cancel = paths == nil ? true : nil
    }

    /// The chosen paths; nil: cancelled.
    package var chosen: [String]? { cancel == true ? nil : paths ?? [] }

    package mutating func validate() throws(CoordinationFailure) {
        if let paths { self.paths = try WireCheck.normalizedPaths(paths, "params.paths", limit: 4096) }
    }
}

/// `app.container`: this connection's app's container (made if missing).
package struct AppContainerRequest: DaemonRequest {
    package static let method = "app.container"
    package typealias Reply = PathReply
    package init() {}
}

/// `app.socket`: app `app`'s own socket, for its sandbox (the user's own tools only).
package struct AppSocketRequest: DaemonRequest {
    package static let method = "app.socket"
    package typealias Reply = PathReply
    package var app: String
    package init(app: String) { self.app = app }
    package func validate() throws(CoordinationFailure) { try WireCheck.app(app, "params.app") }
}

/// A reply naming one path.
package struct PathReply: Codable, Sendable {
    package var path: String
    package init(path: String) { self.path = path }
}
