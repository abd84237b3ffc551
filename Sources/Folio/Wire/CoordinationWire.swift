/// The coordination part of the wire protocol (docs/protocol.md) that is not a request: the limits
/// both sides enforce, failures as replies carry them, and presenter messages as events.
package enum CoordinationWire {
    /// The longest path accepted (Linux's PATH_MAX).
    package static let maximumPathBytes = 4096
    /// The most items one claim may name.
    package static let maximumItems = 256
    /// The longest purpose identifier accepted.
    package static let maximumPurposeBytes = 256

    // MARK: Claims

    /// One claim item as `status` shows it: `{"path", "access": "read"|"write", "options"}`.
    package static func value(of item: ClaimItem) -> WireValue {
        switch item.access {
        case .read(let options): ["path": .string(item.path), "access": "read", "options": .int(Int64(options.rawValue))]
        case .write(let options): ["path": .string(item.path), "access": "write", "options": .int(Int64(options.rawValue))]
        }
    }

    // MARK: Failures

    /// A failure as the `error` member of a reply: `code` is the kind (`cancelled`,
    /// `presenter-error`, …); a presenter's own error adds `domain` and `errorCode`.
    package static func value(of failure: CoordinationFailure) -> WireValue {
        var object: [String: WireValue] = ["code": .string(failure.kind.rawValue), "message": .string(failure.message)]
        if let domain = failure.domain { object["domain"] = .string(domain) }
        if let code = failure.code { object["errorCode"] = .int(Int64(code)) }
        return .object(object)
    }

    package static func failure(from value: WireValue) -> CoordinationFailure {
        let kind = value["code"]?.stringValue.flatMap(CoordinationFailure.Kind.init(rawValue:)) ?? .invalid
        return CoordinationFailure(
            kind: kind, message: value["message"]?.stringValue ?? "the daemon refused the request",
            domain: value["domain"]?.stringValue, code: value["errorCode"]?.intValue.map { Int($0) })
    }

    // MARK: Presenter messages

    package static func event(presenter: UInt64, message: PresenterMessage, token: UInt64?) -> WireValue {
        var event: [String: WireValue] = ["event": "presenter", "presenter": .int(Int64(presenter))]
        if let token { event["token"] = .int(Int64(token)) }
        switch message {
        case .savePresentedItemChanges: event["message"] = "save"
        case .relinquishToReader: event["message"] = "relinquish-reader"
        case .relinquishToWriter: event["message"] = "relinquish-writer"
        case .accommodateDeletion: event["message"] = "accommodate-deletion"
        case .accommodateEviction: event["message"] = "accommodate-eviction"
        case .accommodateSubitemDeletion(let path):
            event["message"] = "accommodate-subitem-deletion"
            event["path"] = .string(path)
        case .reacquire(let relinquished):
            event["message"] = "reacquire"
            event["relinquished"] = .int(Int64(relinquished))
        case .didChange: event["message"] = "did-change"
        case .didMove(let to):
            event["message"] = "did-move"
            event["to"] = .string(to)
        case .subitemDidAppear(let path):
            event["message"] = "subitem-did-appear"
            event["path"] = .string(path)
        case .subitemDidChange(let path):
            event["message"] = "subitem-did-change"
            event["path"] = .string(path)
        case .subitemDidMove(let from, let to):
            event["message"] = "subitem-did-move"
            event["path"] = .string(from)
            event["to"] = .string(to)
        case .didChangeUbiquityAttributes(let keys):
            event["message"] = "ubiquity-changed"
            event["keys"] = .array(keys.map { .string($0) })
        case .versionChanged(let change, let record, let subitem):
            event["message"] = .string("version-" + change.rawValue)
            event["version"] = versionValue(record)
            if let subitem { event["path"] = .string(subitem) }
        }
        return .object(event)
    }

    /// Decodes a presenter event into the presenter, message and token.
    package static func presenterEvent(_ event: WireValue) throws(CoordinationFailure) -> (UInt64, PresenterMessage, UInt64?) {
        let presenter = try number(event, "presenter")
        let token = try optionalNumber(event, "token")
        let message: PresenterMessage
        switch event["message"]?.stringValue {
        case "save": message = .savePresentedItemChanges
        case "relinquish-reader": message = .relinquishToReader
        case "relinquish-writer": message = .relinquishToWriter
        case "accommodate-deletion": message = .accommodateDeletion
        case "accommodate-eviction": message = .accommodateEviction
        case "accommodate-subitem-deletion": message = .accommodateSubitemDeletion(path: try path(event, "path"))
        case "reacquire": message = .reacquire(token: try number(event, "relinquished"))
        case "did-change": message = .didChange
        case "did-move": message = .didMove(to: try path(event, "to"))
        case "subitem-did-appear": message = .subitemDidAppear(path: try path(event, "path"))
        case "subitem-did-change": message = .subitemDidChange(path: try path(event, "path"))
        case "subitem-did-move": message = .subitemDidMove(from: try path(event, "path"), to: try path(event, "to"))
        case "ubiquity-changed":
            message = .didChangeUbiquityAttributes((event["keys"]?.arrayValue ?? []).compactMap(\.stringValue))
        case let name? where name.hasPrefix("version-"):
            guard let change = VersionChange(rawValue: String(name.dropFirst("version-".count))) else { throw invalid("unknown presenter message") }
            let subitem = event["path"] == nil ? nil : try path(event, "path")
            message = .versionChanged(change, record: try versionRecord(event["version"]), subitem: subitem)
        default: throw invalid("unknown presenter message")
        }
        if message.needsAnswer && token == nil { throw invalid("a presenter message that needs an answer has no token") }
        return (presenter, message, token)
    }

    // MARK: Versions

    /// A version record as a wire object (what a presenter needs of it to make a `FileVersion`).
    static func versionValue(_ record: VersionRecord) -> WireValue {
        .object([
            "id": .string(record.id), "object": .string(record.object), "size": .int(record.size),
            "modified": .string(String(record.modificationDate)), "added": .string(String(record.addedAt)),
            "computer": .string(record.savingComputer), "name": .string(record.name), "kind": .string(record.kind.rawValue),
            "conflict": .bool(record.isConflict), "resolved": .bool(record.isResolved),
        ])
    }

    /// The version record of a presenter message; every field checked.
    static func versionRecord(_ value: WireValue?) throws(CoordinationFailure) -> VersionRecord {
        guard let value, let id = value["id"]?.stringValue, !id.isEmpty, id.utf8.count <= 128,
            let object = value["object"]?.stringValue, VersionStore.isHash(object), DocumentIdentity.isValid(id),
            let size = value["size"]?.intValue, size >= 0,
            let modified = value["modified"]?.stringValue.flatMap(Double.init), modified.isFinite,
            let added = value["added"]?.stringValue.flatMap(Double.init), added.isFinite,
            let computer = value["computer"]?.stringValue, computer.utf8.count <= 1024,
            let name = value["name"]?.stringValue, name.utf8.count <= 1024,
            let kind = value["kind"]?.stringValue.flatMap(VersionRecord.Kind.init(rawValue:)),
            let conflict = value["conflict"]?.boolValue, let resolved = value["resolved"]?.boolValue
        else { throw invalid("a version message's version is malformed") }
        return VersionRecord(
            id: id, object: object, size: size, modificationDate: modified, addedAt: added, savingComputer: computer, name: name, kind: kind,
            isConflict: conflict, isResolved: resolved)
    }

    // MARK: Field readers

    package static func invalid(_ message: String) -> CoordinationFailure {
        CoordinationFailure(kind: .invalid, message: message)
    }

    /// An absolute path of at most PATH_MAX bytes, without NUL.
    package static func path(_ object: WireValue, _ key: String) throws(CoordinationFailure) -> String {
        guard let value = object[key]?.stringValue else { throw invalid("\(key) must be a string") }
        try WireCheck.absolutePath(value, key)
        return value
    }

    package static func number(_ object: WireValue, _ key: String) throws(CoordinationFailure) -> UInt64 {
        guard let value = object[key]?.intValue, value >= 0 else { throw invalid("\(key) must be a non-negative integer") }
        return UInt64(value)
    }

    package static func optionalNumber(_ object: WireValue, _ key: String) throws(CoordinationFailure) -> UInt64? {
        guard let value = object[key], value != .null else { return nil }
        return try number(object, key)
    }
}
