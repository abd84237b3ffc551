/// Decodes `Decodable` values from `WireValue`s (the frames' parsed JSON), for the typed requests
/// and replies both sides share. The frame's own limits (size, depth, duplicate keys, UTF-8) are
/// the parser's; this adds the types: a member of the wrong kind, a missing one or an integer out
/// of range is a `CoordinationFailure` of kind `invalid` naming the member (`params.items[0].path`).
/// Absent members and `null` decode as nil; members the type does not know are ignored.
package struct WireValueDecoder {
    /// What the decoded value is called in errors: `params` (a request's) or `reply`.
    package var root: String

    package init(root: String = "params") { self.root = root }

    /// The error for a member `name` that is not `expected` (`params.items[1].path must be a
    /// string, not 5`).
    package static func mismatch(_ name: String, _ expected: String, _ found: WireValue) -> CoordinationFailure {
        let kind: String
        switch found {
        case .null: kind = "null"
        case .bool: kind = "a boolean"
        case .int(let number): kind = "\(number)"
        case .double(let number): kind = "\(number)"
        case .string: kind = "a string"
        case .array: kind = "an array"
        case .object: kind = "an object"
        }
        return CoordinationWire.invalid("\(name) must be \(expected), not \(kind)")
    }

    /// Decodes `type` from `value` (nil: an absent `params`, decoded as an empty object).
    package func decode<T: Decodable>(_ type: T.Type, from value: WireValue?) throws(CoordinationFailure) -> T {
        do {
            return try T(from: WireDecoding(value: value ?? .object([:]), codingPath: [WireNameKey(stringValue: root)]))
        } catch let failure as CoordinationFailure {
            throw failure
        } catch {
            throw CoordinationWire.invalid("\(error)")
        }
    }
}

/// One position in the value being decoded.
private struct WireDecoding: Decoder {
    let value: WireValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw WireDecoding.mismatch(codingPath, "an object", value) }
        return KeyedDecodingContainer(KeyedWireContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw WireDecoding.mismatch(codingPath, "an array", value) }
        return UnkeyedWireContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleWireContainer(value: value, codingPath: codingPath) }

    /// "params.items[0].path" for a coding path (whose first key names the root).
    static func name(_ path: [any CodingKey]) -> String {
        var text = path.first?.stringValue ?? "params"
        for key in path.dropFirst() {
            if let index = key.intValue { text += "[\(index)]" } else { text += "." + key.stringValue }
        }
        return text
    }

    static func mismatch(_ path: @autoclosure () -> [any CodingKey], _ expected: String, _ found: WireValue) -> CoordinationFailure {
        WireValueDecoder.mismatch(name(path()), expected, found)
    }

    /// Decodes a scalar (or, through `T.init(from:)`, anything else). The coding path is built only
    /// for an error or a nested value: most members are scalars that decode without it.
    static func decodeScalar<T: Decodable>(_ type: T.Type, _ value: WireValue, _ path: @autoclosure () -> [any CodingKey]) throws -> T {
        switch type {
        case is String.Type:
            guard case .string(let text) = value else { throw mismatch(path(), "a string", value) }
            return text as! T
        case is Bool.Type:
            guard case .bool(let flag) = value else { throw mismatch(path(), "true or false", value) }
            return flag as! T
        case is Int64.Type:
            guard let number = value.intValue else { throw mismatch(path(), "an integer", value) }
            return number as! T
        case is Int.Type:
            guard let number = value.intValue else { throw mismatch(path(), "an integer", value) }
            return Int(number) as! T
        case is UInt64.Type:
            guard let number = value.intValue, number >= 0 else { throw mismatch(path(), "a non-negative integer", value) }
            return UInt64(number) as! T
        case is UInt.Type:
            guard let number = value.intValue, number >= 0 else { throw mismatch(path(), "a non-negative integer", value) }
            return UInt(number) as! T
        case is Double.Type:
            switch value {
            case .int(let number): return Double(number) as! T
            case .double(let number): return number as! T
            default: throw mismatch(path(), "a number", value)
            }
        case is WireValue.Type:
            return value as! T
        default:
            return try T(from: WireDecoding(value: value, codingPath: path()))
        }
    }
}

private struct KeyedWireContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: WireValue]
    let codingPath: [any CodingKey]
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { (members[key.stringValue] ?? .null) == .null }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let value = members[key.stringValue] else {
            throw CoordinationWire.invalid("\(WireDecoding.name(codingPath + [key])) is missing")
        }
        return try WireDecoding.decodeScalar(type, value, codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = members[key.stringValue], value != .null else { return nil }
        return try WireDecoding.decodeScalar(type, value, codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try WireDecoding(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try WireDecoding(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { WireDecoding(value: .object(members), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        WireDecoding(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedWireContainer: UnkeyedDecodingContainer {
    let items: [WireValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(items: [WireValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    private var indexKey: WireIndexKey { WireIndexKey(intValue: currentIndex) }

    private mutating func next() throws -> WireValue {
        guard !isAtEnd else { throw CoordinationWire.invalid("\(WireDecoding.name(codingPath)) has too few items") }
        defer { currentIndex += 1 }
        return items[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let key = indexKey
        return try WireDecoding.decodeScalar(type, try next(), codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let path = codingPath + [indexKey]
        return try WireDecoding(value: try next(), codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = codingPath + [indexKey]
        return try WireDecoding(value: try next(), codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let path = codingPath + [indexKey]
        return WireDecoding(value: try next(), codingPath: path)
    }
}

private struct SingleWireContainer: SingleValueDecodingContainer {
    let value: WireValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try WireDecoding.decodeScalar(type, value, codingPath) }
}

/// The decoded value's own name, first in every coding path.
struct WireNameKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// An array index as a coding key.
struct WireIndexKey: CodingKey {
    var stringValue: String { "\(intValue!)" }
    var intValue: Int?
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
