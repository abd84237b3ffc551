import Foundation

/// The daemon's wire protocol, version 1: newline-delimited JSON frames over the Unix socket
/// (docs/protocol.md). A request is `{"id":N,"method":"…","params":{…}}`; the reply carries the same
/// id and either `result` or `error` (`{"code":"…","message":"…"}`).
enum WireProtocol {
    /// The protocol version this daemon speaks.
    static let version = 1
    /// The largest frame accepted; a longer line is refused and the connection closed.
    static let maximumFrameSize = 1 << 20
}

/// A request frame.
struct WireRequest: Decodable, Sendable {
    var id: Int?
    var method: String
    var params: [String: String]?
}

/// An error in a reply frame.
struct WireError: Codable, Sendable, Error {
    var code: String
    var message: String

    static func badRequest(_ message: String) -> WireError { WireError(code: "bad-request", message: message) }
}

/// A reply frame.
struct WireReply: Encodable, Sendable {
    var id: Int?
    var result: [String: WireValue]?
    var error: WireError?
}

/// A JSON value in a reply.
enum WireValue: Encodable, Sendable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case strings([String])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let s): try container.encode(s)
        case .int(let i): try container.encode(i)
        case .bool(let b): try container.encode(b)
        case .strings(let list): try container.encode(list)
        }
    }
}
