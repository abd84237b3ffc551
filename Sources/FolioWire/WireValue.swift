/// A JSON value as carried by the daemon's wire protocol (docs/protocol.md).
///
/// The protocol has its own small codec rather than `JSONSerialization`: frames are parsed from raw
/// bytes with explicit limits (size, depth, string length), so a hostile or broken peer gets a clear
/// error, and the hot path of a coordination round trip stays cheap.
package enum WireValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([WireValue])
    case object([String: WireValue])

    /// The member `key` of an object, or nil.
    package subscript(key: String) -> WireValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The value as a string, or nil.
    package var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The value as an integer, or nil (a double with no fraction counts).
    package var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e15: return Int64(d)
        default: return nil
        }
    }

    /// The value as a bool, or nil.
    package var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The value as an array, or nil.
    package var arrayValue: [WireValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The value as an object, or nil.
    package var objectValue: [String: WireValue]? {
        if case .object(let o) = self { return o }
        return nil
    }
}

extension WireValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .int(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: WireValue...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, WireValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
