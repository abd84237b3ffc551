/// A request a client sends the daemon, typed on both sides: its method name, its parameters (the
/// type's members, in `params`) and its reply. The daemon decodes a frame's `params` into the type
/// with `WireValueDecoder` (after the parser's limits on the frame) and then calls `validate()`;
/// the client encodes it with `WireValueEncoder` and decodes the reply as `Reply`.
///
/// Adding a request is one such type and one route in the daemon, which also says where the
/// handler runs (`RequestRoute`).
package protocol DaemonRequest: Codable, Sendable {
    /// What the daemon answers.
    associatedtype Reply: Codable & Sendable
    /// The frame's `method`.
    static var method: String { get }
    /// Checks what the types cannot say (lengths, absolute paths, ranges) and normalizes paths; a
    /// bad parameter is a `CoordinationFailure` of kind `invalid` with a clear message.
    mutating func validate() throws(CoordinationFailure)
    /// Decodes and checks a frame's `params` (nil when the frame had none). The default decodes
    /// through `Codable`; a `HotPathRequest` reads its few members directly.
    init(params: WireValue?) throws(CoordinationFailure)
    /// The request's `params`. The default encodes through `Codable`.
    func encodedParams() throws(CoordinationFailure) -> WireValue
}

extension DaemonRequest {
    package mutating func validate() throws(CoordinationFailure) {}

    package init(params: WireValue?) throws(CoordinationFailure) {
        self = try WireValueDecoder().decode(Self.self, from: params)
        try validate()
    }

    package func encodedParams() throws(CoordinationFailure) -> WireValue { try WireValueEncoder().encode(self) }
}

/// A request on the coordination hot path (a claim, its release), sent twice per coordinated read
/// or write: it reads and writes its few members directly, which costs a fraction of the generic
/// codec's containers. The direct forms must agree with the `Codable` ones, errors included:
/// `WireCodableTests` and the wire fuzzer hold them to it (`HotPathRequest.disagreement`).
package protocol HotPathRequest: DaemonRequest {
    /// Reads the members from `params`, with the generic decoder's errors; `init(params:)` then
    /// validates.
    init(members params: WireValue?) throws(CoordinationFailure)
}

extension HotPathRequest {
    package init(params: WireValue?) throws(CoordinationFailure) {
        try self.init(members: params)
        try validate()
    }

    /// Decodes `params` both ways (for tests and the fuzzer): nil when they agree — both fail with
    /// the same message, or both succeed and encode to the same parameters — else how they differ.
    package static func disagreement(_ params: WireValue?) -> String? {
        let direct = Result { () throws(CoordinationFailure) in try Self(params: params) }
        let generic = Result { () throws(CoordinationFailure) in
            var request = try WireValueDecoder().decode(Self.self, from: params)
            try request.validate()
            return request
        }
        switch (direct, generic) {
        case (.failure(let one), .failure(let other)):
            return one == other ? nil : "\(method): the direct decoder says \(one.message), Codable says \(other.message)"
        case (.success(let one), .success(let other)):
            let encoded = try? one.encodedParams(), generically = try? WireValueEncoder().encode(other)
            return encoded != nil && encoded == generically
                ? nil : "\(method) encodes differently: \(String(describing: encoded)) / \(String(describing: generically))"
        case (.success, .failure(let failure)):
            return "\(method): the direct decoder took \(String(describing: params)), Codable refused it: \(failure.message)"
        case (.failure(let failure), .success):
            return "\(method): Codable took \(String(describing: params)), the direct decoder refused it: \(failure.message)"
        }
    }
}

/// The generic decoder's checks for a `HotPathRequest`'s direct reads, with its messages.
package struct WireMembers {
    private let members: [String: WireValue]
    private let name: String

    /// The members of `value` (nil: no params, read as an empty object), named `name` in errors.
    package init(_ value: WireValue?, name: String = "params") throws(CoordinationFailure) {
        guard case .object(let members) = value ?? .object([:]) else {
            throw WireValueDecoder.mismatch(name, "an object", value ?? .null)
        }
        self.members = members
        self.name = name
    }

    /// The member `key`: refused when missing.
    package func value(_ key: String) throws(CoordinationFailure) -> WireValue {
        guard let value = members[key] else { throw CoordinationWire.invalid("\(name).\(key) is missing") }
        return value
    }

    /// The member `key`, or nil when it is missing or null.
    package func optional(_ key: String) -> WireValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    package func string(_ key: String) throws(CoordinationFailure) -> String {
        let value = try value(key)
        guard case .string(let text) = value else { throw WireValueDecoder.mismatch("\(name).\(key)", "a string", value) }
        return text
    }

    package func unsigned(_ key: String) throws(CoordinationFailure) -> UInt64 {
        try Self.unsigned(try value(key), "\(name).\(key)")
    }

    package func optionalUnsigned(_ key: String) throws(CoordinationFailure) -> UInt64? {
        try optional(key).map { value throws(CoordinationFailure) in try Self.unsigned(value, "\(name).\(key)") }
    }

    package func optionalBool(_ key: String) throws(CoordinationFailure) -> Bool? {
        guard let value = optional(key) else { return nil }
        guard case .bool(let flag) = value else { throw WireValueDecoder.mismatch("\(name).\(key)", "true or false", value) }
        return flag
    }

    /// The member `key`, an array.
    package func array(_ key: String) throws(CoordinationFailure) -> [WireValue] {
        let value = try value(key)
        guard case .array(let items) = value else { throw WireValueDecoder.mismatch("\(name).\(key)", "an array", value) }
        return items
    }

    static func unsigned(_ value: WireValue, _ name: String) throws(CoordinationFailure) -> UInt64 {
        guard let number = value.intValue, number >= 0 else { throw WireValueDecoder.mismatch(name, "a non-negative integer", value) }
        return UInt64(number)
    }
}
