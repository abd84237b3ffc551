/// A frame a client sent the daemon, parsed: its id, its method and its parameters, not yet
/// decoded (the daemon's route for the method decodes them into the request's type). A malformed,
/// truncated, oversized or hostile frame is refused here with a clear error and changes nothing.
package struct ClientFrame: Sendable {
    /// The request's id; nil for a notification (no reply unless it fails).
    package var id: Int64?
    package var method: String
    /// The parameters (nil when the frame has none).
    package var params: WireValue?

    /// Parses one frame (one line, without its newline).
    ///
    /// - Throws: `ClientFrameError`, carrying the frame's id when it could be read.
    package init(decoding bytes: some Collection<UInt8>) throws(ClientFrameError) {
        let value: WireValue
        do {
            value = try WireValue(parsing: bytes)
        } catch {
            throw ClientFrameError(id: nil, code: "bad-request", message: "not a JSON frame: \(error)")
        }
        guard case .object(let members) = value else {
            throw ClientFrameError(id: nil, code: "bad-request", message: "a frame must be a JSON object")
        }
        switch members["id"] {
        case nil, .null?: id = nil
        case .int(let number)?: id = number
        default: throw ClientFrameError(id: nil, code: "bad-request", message: "\"id\" must be an integer")
        }
        guard case .string(let method)? = members["method"] else {
            throw ClientFrameError(id: id, code: "bad-request", message: "a frame needs a \"method\" string")
        }
        self.method = method
        params = members["params"]
    }
}

/// Why a client's frame was refused.
package struct ClientFrameError: Error, Sendable {
    package var id: Int64?
    /// The wire error code (`bad-request`, `unknown-method`, `invalid`).
    package var code: String
    package var message: String

    package init(id: Int64?, code: String, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }
}
