/// Encodes `Encodable` values as `WireValue`s, for the typed requests and replies both sides
/// share. Optionals that are nil are left out (not sent as `null`); integers are sent as integers.
package struct WireValueEncoder {
    package init() {}

    /// Encodes `value`.
    package func encode<T: Encodable>(_ value: T) throws(CoordinationFailure) -> WireValue {
        let node = WireNode()
        do {
            try WireEncoding.encodeScalar(value, into: node, path: [])
        } catch let failure as CoordinationFailure {
            throw failure
        } catch {
            throw CoordinationWire.invalid("\(error)")
        }
        return node.resolved
    }
}

/// A value under construction; containers hand out children that fill in later.
private final class WireNode {
    enum Content {
        case unset
        case value(WireValue)
        case object([String: WireNode])
        case array([WireNode])
    }

    var content = Content.unset

    var resolved: WireValue {
        switch content {
        case .unset: .object([:])
        case .value(let value): value
        case .object(let members): .object(members.mapValues(\.resolved))
        case .array(let items): .array(items.map(\.resolved))
        }
    }

    func child(_ key: String) -> WireNode {
        let node = WireNode()
        if case .object(var members) = content {
            content = .unset  // the dictionary is then uniquely referenced, and grows in place
            members[key] = node
            content = .object(members)
        } else {
            content = .object([key: node])
        }
        return node
    }

    func append() -> WireNode {
        let node = WireNode()
        if case .array(var items) = content {
            content = .unset
            items.append(node)
            content = .array(items)
        } else {
            content = .array([node])
        }
        return node
    }
}

private struct WireEncoding: Encoder {
    let node: WireNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([:]) }
        return KeyedEncodingContainer(KeyedWireEncoding<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedWireEncoding(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleWireEncoding(node: node, codingPath: codingPath) }

    static func encodeScalar<T: Encodable>(_ value: T, into node: WireNode, path: @autoclosure () -> [any CodingKey]) throws {
        switch value {
        case let text as String: node.content = .value(.string(text))
        case let flag as Bool: node.content = .value(.bool(flag))
        case let number as Int64: node.content = .value(.int(number))
        case let number as Int: node.content = .value(.int(Int64(number)))
        case let number as UInt64:
            guard let exact = Int64(exactly: number) else { throw CoordinationWire.invalid("\(path()) is beyond 64-bit signed range") }
            node.content = .value(.int(exact))
        case let number as UInt:
            guard let exact = Int64(exactly: number) else { throw CoordinationWire.invalid("\(path()) is beyond 64-bit signed range") }
            node.content = .value(.int(exact))
        case let number as Double: node.content = .value(.double(number))
        case let wire as WireValue: node.content = .value(wire)
        default: try value.encode(to: WireEncoding(node: node, codingPath: path()))
        }
    }
}

private struct KeyedWireEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: WireNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(key.stringValue).content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try WireEncoding.encodeScalar(value, into: node.child(key.stringValue), path: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        WireEncoding(node: node.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        WireEncoding(node: node.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { WireEncoding(node: node, codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { WireEncoding(node: node.child(key.stringValue), codingPath: codingPath + [key]) }
}

private struct UnkeyedWireEncoding: UnkeyedEncodingContainer {
    let node: WireNode
    let codingPath: [any CodingKey]
    var count: Int {
        if case .array(let items) = node.content { return items.count }
        return 0
    }

    mutating func encodeNil() throws { node.append().content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = count
        try WireEncoding.encodeScalar(value, into: node.append(), path: codingPath + [WireIndexKey(intValue: index)])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [WireIndexKey(intValue: count)]
        return WireEncoding(node: node.append(), codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [WireIndexKey(intValue: count)]
        return WireEncoding(node: node.append(), codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [WireIndexKey(intValue: count)]
        return WireEncoding(node: node.append(), codingPath: path)
    }
}

private struct SingleWireEncoding: SingleValueEncodingContainer {
    let node: WireNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws { try WireEncoding.encodeScalar(value, into: node, path: codingPath) }
}
