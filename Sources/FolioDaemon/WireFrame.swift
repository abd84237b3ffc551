import Folio

/// The frames the daemon writes (docs/protocol.md).
enum WireFrame {
    /// The protocol version this daemon speaks.
    static let protocolVersion = DaemonProtocol.version
    /// The largest frame accepted; a longer line is refused and the connection closed.
    static let maximumFrameSize = 1 << 20

    static func result(_ id: WireValue, _ result: WireValue) -> WireValue {
        ["id": id, "result": result]
    }

    static func error(_ id: WireValue, code: String, message: String) -> WireValue {
        ["id": id, "error": ["code": .string(code), "message": .string(message)]]
    }

    static func error(_ id: WireValue, _ failure: CoordinationFailure) -> WireValue {
        ["id": id, "error": CoordinationWire.value(of: failure)]
    }
}
