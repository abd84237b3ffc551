package import Foundation

/// What the document picker is asked to do (apple-semantics §5.1).
package enum PickerMode: String, Sendable, CaseIterable {
    /// Copy the chosen documents into the app's temporary folder (`asCopy: true`).
    case `import`
    /// Hand out the chosen originals, security-scoped (`asCopy: false`).
    case open
    /// Copy the app's documents to a folder the user chooses.
    case export
    /// Move the app's documents to a folder the user chooses.
    case move
}

/// A picker request as the daemon receives it from an app, and hands it to the front end.
package struct PickerRequest: Sendable, Equatable {
    package var mode: PickerMode
    /// Type identifiers the chosen items must conform to (open and import); empty: any.
    package var types: [String]
    package var allowsMultipleSelection: Bool
    /// The folder to start in.
    package var directory: String?
    /// The documents to export or move.
    package var urls: [String]
    package var showsFileExtensions: Bool

    package init(
        mode: PickerMode, types: [String] = [], allowsMultipleSelection: Bool = false, directory: String? = nil, urls: [String] = [],
        showsFileExtensions: Bool = false
    ) {
        self.mode = mode
        self.types = types
        self.allowsMultipleSelection = allowsMultipleSelection
        self.directory = directory
        self.urls = urls
        self.showsFileExtensions = showsFileExtensions
    }

    /// The request's wire form.
    package var wireValue: WireValue {
        var object: [String: WireValue] = [
            "mode": .string(mode.rawValue), "types": .array(types.map { .string($0) }),
            "multiple": .bool(allowsMultipleSelection), "urls": .array(urls.map { .string($0) }),
            "extensions": .bool(showsFileExtensions),
        ]
        if let directory { object["directory"] = .string(directory) }
        return .object(object)
    }

    /// Reads and checks a request's wire form.
    package init(wire params: WireValue) throws(CoordinationFailure) {
        typealias W = CoordinationWire
        guard case .object = params else { throw W.invalid("the picker needs a params object") }
        guard let mode = params["mode"]?.stringValue.flatMap(PickerMode.init(rawValue:)) else {
            throw W.invalid("mode must be one of import, open, export, move")
        }
        self.mode = mode
        types = try AccessWire.strings(params, "types", limit: 256, each: 1024)
        allowsMultipleSelection = params["multiple"]?.boolValue ?? false
        directory = try W.optionalPath(params, "directory")
        urls = try AccessWire.paths(params, "urls", limit: 4096)
        showsFileExtensions = params["extensions"]?.boolValue ?? false
        if mode == .export || mode == .move {
            guard !urls.isEmpty else { throw W.invalid("\(mode.rawValue) needs the documents to \(mode.rawValue) in urls") }
        }
    }
}

/// Requests about apps, grants, bookmarks and the picker (docs/protocol.md, "Access").
package enum AccessRequest: Sendable {
    /// May this connection's app reach `path` (for writing)?
    case check(path: String, write: Bool)
    /// Grants (of one app, or all; an app sees only its own).
    case listGrants(app: String?)
    /// Revokes a grant by number, or every grant of `app` (to `path`).
    case revoke(grant: UInt64?, app: String?, path: String?)
    /// Grants `app` the item at `path` (the user's own tools only: `folio open`, `folio grants add`).
    case grant(app: String, path: String, write: Bool, persistent: Bool)
    /// Signs bookmark data for `path`.
    case createBookmark(path: String, options: UInt, keys: [String], base: String?)
    /// Checks and resolves bookmark data.
    case resolveBookmark(data: Data, base: String?)
    /// The values stored in bookmark data.
    case bookmarkValues(data: Data)
    /// Runs the document picker for this connection's app.
    case pick(PickerRequest)
    /// This connection becomes the picker's front end.
    case attachPicker
    /// The front end's answer to picker request `request`: chosen paths (or a destination folder for
    /// export and move), or nil to cancel.
    case choose(request: UInt64, paths: [String]?)
    /// This connection's app's container (made if missing).
    case container
    /// App `app`'s own socket, for a sandbox (the user's own tools only).
    case appSocket(app: String)

    /// The largest bookmark accepted on the wire, base64 included.
    static let maximumBookmarkBytes = 96 << 10

    init?(method: String, params: WireValue?) throws(CoordinationFailure) {
        typealias W = CoordinationWire
        func object() throws(CoordinationFailure) -> WireValue {
            guard let params, case .object = params else { throw W.invalid("\(method) needs a params object") }
            return params
        }
        switch method {
        case "access.check":
            let params = try object()
            self = .check(path: try W.path(params, "path"), write: params["write"]?.boolValue ?? false)
        case "grant.list":
            self = .listGrants(app: try params.flatMap { params throws(CoordinationFailure) in try AccessWire.optionalApp(params, "app") })
        case "grant.revoke":
            let params = try object()
            let grant = try W.optionalNumber(params, "grant")
            let app = try AccessWire.optionalApp(params, "app")
            let path = try W.optionalPath(params, "path")
            guard grant != nil || app != nil else { throw W.invalid("grant.revoke needs a grant number, or an app (and a path)") }
            self = .revoke(grant: grant, app: app, path: path)
        case "grant.add":
            let params = try object()
            guard let app = try AccessWire.optionalApp(params, "app") else { throw W.invalid("grant.add needs an app") }
            self = .grant(
                app: app, path: try W.path(params, "path"), write: params["write"]?.boolValue ?? false,
                persistent: params["persistent"]?.boolValue ?? true)
        case "bookmark.create":
            let params = try object()
            guard let options = params["options"]?.intValue ?? 0 as Int64?, options >= 0 else { throw W.invalid("options must be a non-negative integer") }
            self = .createBookmark(
                path: try W.path(params, "path"), options: UInt(options), keys: try AccessWire.strings(params, "keys", limit: 64, each: 256),
                base: try W.optionalPath(params, "base"))
        case "bookmark.resolve":
            let params = try object()
            self = .resolveBookmark(data: try AccessWire.data(params, "data"), base: try W.optionalPath(params, "base"))
        case "bookmark.values":
            self = .bookmarkValues(data: try AccessWire.data(try object(), "data"))
        case "picker.pick":
            self = .pick(try PickerRequest(wire: try object()))
        case "picker.attach":
            self = .attachPicker
        case "picker.choose":
            let params = try object()
            let request = try W.number(params, "request")
            if params["cancel"]?.boolValue == true {
                self = .choose(request: request, paths: nil)
            } else {
                self = .choose(request: request, paths: try AccessWire.paths(params, "paths", limit: 4096))
            }
        case "app.container":
            self = .container
        case "app.socket":
            guard let app = try AccessWire.optionalApp(try object(), "app") else { throw W.invalid("app.socket needs an app") }
            self = .appSocket(app: app)
        default:
            return nil
        }
    }
}

/// Field readers for the access requests.
package enum AccessWire {
    /// An app identifier: reverse DNS, at most 255 bytes.
    package static func isValidApp(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= 255, text.contains("."), !text.hasPrefix("."), !text.hasSuffix("."),
            !text.contains("..")
        else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
    }

    static func optionalApp(_ object: WireValue, _ key: String) throws(CoordinationFailure) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard let text = value.stringValue, isValidApp(text) else {
            throw CoordinationWire.invalid("\(key) must be an app identifier (reverse DNS: letters, digits, '-' and '.')")
        }
        return text
    }

    static func strings(_ object: WireValue, _ key: String, limit: Int, each: Int) throws(CoordinationFailure) -> [String] {
        guard let value = object[key], value != .null else { return [] }
        guard let list = value.arrayValue, list.count <= limit else {
            throw CoordinationWire.invalid("\(key) must be an array of at most \(limit) strings")
        }
        var result: [String] = []
        for item in list {
            guard let text = item.stringValue, text.utf8.count <= each else { throw CoordinationWire.invalid("\(key) must hold strings of at most \(each) bytes") }
            result.append(text)
        }
        return result
    }

    static func paths(_ object: WireValue, _ key: String, limit: Int) throws(CoordinationFailure) -> [String] {
        let list = try strings(object, key, limit: limit, each: CoordinationWire.maximumPathBytes)
        for path in list {
            guard path.hasPrefix("/"), !path.utf8.contains(0) else { throw CoordinationWire.invalid("\(key) must hold absolute paths") }
        }
        return list.map { CoordinationPath.normalize($0) }
    }

    static func data(_ object: WireValue, _ key: String) throws(CoordinationFailure) -> Data {
        let text = try CoordinationWire.string(object, key, limit: AccessRequest.maximumBookmarkBytes)
        guard let data = Data(base64Encoded: text) else { throw CoordinationWire.invalid("\(key) must be base64") }
        return data
    }
}
