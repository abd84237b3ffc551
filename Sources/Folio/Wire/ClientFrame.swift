/// A frame a client sent the daemon, decoded and validated: the daemon acts only on these, so a
/// malformed, truncated, oversized or hostile frame is refused here with a clear error and changes
/// nothing.
package struct ClientFrame: Sendable {
    /// The request's id; nil for a notification (no reply unless it fails).
    package var id: Int64?
    package var request: ClientRequest

    /// Decodes one frame (one line, without its newline).
    ///
    /// - Throws: `ClientFrameError`, carrying the frame's id when it could be read.
    package init(decoding bytes: some Collection<UInt8>) throws(ClientFrameError) {
        let value: WireValue
        do {
            value = try WireValue(parsing: bytes)
        } catch {
            throw ClientFrameError(id: nil, code: "bad-request", message: "not a JSON frame: \(error)")
        }
        guard case .object = value else {
            throw ClientFrameError(id: nil, code: "bad-request", message: "a frame must be a JSON object")
        }
        switch value["id"] {
        case nil, .null?: id = nil
        case .int(let number)?: id = number
        default: throw ClientFrameError(id: nil, code: "bad-request", message: "\"id\" must be an integer")
        }
        guard let method = value["method"]?.stringValue else {
            throw ClientFrameError(id: id, code: "bad-request", message: "a frame needs a \"method\" string")
        }
        do {
            request = try ClientRequest(method: method, id: id, params: value["params"])
        } catch {
            throw ClientFrameError(id: id, code: error.kind.rawValue, message: error.message)
        }
    }
}

/// Why a client's frame was refused.
package struct ClientFrameError: Error, Sendable {
    package var id: Int64?
    /// The wire error code (`bad-request`, `unknown-method`).
    package var code: String
    package var message: String
}

/// What a client asks of the daemon (docs/protocol.md).
package enum ClientRequest: Sendable {
    case hello(protocolVersion: Int64?, name: String?, app: String?)
    case access(AccessRequest)
    case index(IndexRequest)
    case typesShow(TypesShow)
    case typesOf(TypesOf)
    case status
    case claim(ClaimRequest)
    case release(claim: UInt64)
    case cancel(claim: UInt64)
    case moved(claim: UInt64, from: String, to: String)
    case addPresenter(UInt64, purpose: String, path: String?)
    case updatePresenter(UInt64, path: String?)
    case removePresenter(UInt64)
    case answer(PresenterAnswer)
    case ubiquityChanged(path: String, keys: [String])
    /// `drive.sync`: run a pass of the drive now (`folio drive sync`), and reply with its report.
    case driveSync(confirmingDeletions: Bool)

    init(method: String, id: Int64?, params: WireValue?) throws(CoordinationFailure) {
        typealias W = CoordinationWire
        func object() throws(CoordinationFailure) -> WireValue {
            guard let params, case .object = params else { throw W.invalid("\(method) needs a params object") }
            return params
        }
        switch method {
        case "hello":
            self = .hello(
                protocolVersion: params?["protocol"]?.intValue, name: params?["name"]?.stringValue,
                app: try params.flatMap { params throws(CoordinationFailure) in try AccessWire.optionalApp(params, "app") })
        case TypesShow.method: self = .typesShow(try TypesShow(params: params))
        case TypesOf.method: self = .typesOf(try TypesOf(params: params))
        case "status":
            self = .status
        case "claim":
            guard let id, id > 0 else { throw W.invalid("a claim needs a positive \"id\", which names the claim") }
            var request = try W.claimRequest(id: UInt64(id), params: params)
            for index in request.items.indices {
                request.items[index].path = CoordinationPath.normalize(request.items[index].path)
            }
            self = .claim(request)
        case "release":
            self = .release(claim: try W.number(try object(), "claim"))
        case "cancel":
            self = .cancel(claim: try W.number(try object(), "claim"))
        case "moved":
            let params = try object()
            self = .moved(
                claim: try W.number(params, "claim"), from: CoordinationPath.normalize(try W.path(params, "from")),
                to: CoordinationPath.normalize(try W.path(params, "to")))
        case "presenter.add":
            let params = try object()
            let purpose = try W.string(params, "purpose", limit: W.maximumPurposeBytes)
            guard !purpose.isEmpty else { throw W.invalid("purpose must not be empty") }
            self = .addPresenter(
                try W.number(params, "presenter"), purpose: purpose,
                path: try W.optionalPath(params, "path").map { CoordinationPath.normalize($0) })
        case "presenter.update":
            let params = try object()
            self = .updatePresenter(
                try W.number(params, "presenter"), path: try W.optionalPath(params, "path").map { CoordinationPath.normalize($0) })
        case "presenter.remove":
            self = .removePresenter(try W.number(try object(), "presenter"))
        case "presenter.answer":
            self = .answer(try W.answer(params: params))
        case "ubiquity.changed":
            let params = try object()
            guard let keys = params["keys"]?.arrayValue, keys.count <= 64 else {
                throw W.invalid("keys must be an array of at most 64 names")
            }
            var names: [String] = []
            for key in keys {
                guard let name = key.stringValue, name.utf8.count <= 256 else { throw W.invalid("keys must be short strings") }
                names.append(name)
            }
            self = .ubiquityChanged(path: CoordinationPath.normalize(try W.path(params, "path")), keys: names)
        case "drive.sync":
            let confirm = params?["confirmDeletions"]
            guard confirm == nil || confirm?.boolValue != nil else { throw W.invalid("confirmDeletions must be a boolean") }
            self = .driveSync(confirmingDeletions: confirm?.boolValue ?? false)
        default:
            if let index = try IndexRequest(method: method, params: params) {
                self = .index(index)
                return
            }
            guard let access = try AccessRequest(method: method, params: params) else {
                throw CoordinationFailure(kind: .unknownMethod, message: "no method \(method)")
            }
            self = .access(access)
        }
    }
}
