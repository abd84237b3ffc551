/// A request a client sends the daemon, typed on both sides: its method name, its parameters (the
/// type's members, in `params`) and its reply. The daemon decodes a frame's `params` into the type
/// with `WireValueDecoder` (after the parser's limits on the frame) and then calls `validate()`;
/// the client encodes it with `WireValueEncoder` and decodes the reply as `Reply`.
///
/// Adding a request is one such type and one handler in the daemon (which also says where the
/// handler runs: `ClientRequest.placement`).
package protocol DaemonRequest: Codable, Sendable {
    /// What the daemon answers.
    associatedtype Reply: Codable & Sendable
    /// The frame's `method`.
    static var method: String { get }
    /// Checks what the types cannot say (lengths, absolute paths, ranges) and normalizes paths; a
    /// bad parameter is a `CoordinationFailure` of kind `invalid` with a clear message.
    mutating func validate() throws(CoordinationFailure)
}

extension DaemonRequest {
    package mutating func validate() throws(CoordinationFailure) {}

    /// Decodes and checks a frame's `params` (nil when the frame had none).
    package init(params: WireValue?) throws(CoordinationFailure) {
        self = try WireValueDecoder().decode(Self.self, from: params)
        try validate()
    }
}
