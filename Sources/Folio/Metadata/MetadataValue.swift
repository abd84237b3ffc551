public import Foundation

/// A value of a metadata attribute, or a constant in a predicate.
public enum MetadataValue: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case double(Double)
    case date(Date)
    case bool(Bool)
    case array([MetadataValue])
    case null

    /// The value as a number, for comparisons (dates as seconds since 1970, Booleans as 0 or 1).
    package var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        case .date(let value): value.timeIntervalSince1970
        case .bool(let value): value ? 1 : 0
        default: nil
        }
    }

    package var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// Apple's predicate-format spelling of the value.
    public var description: String {
        switch self {
        case .string(let value):
            return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .integer(let value): return String(value)
        case .double(let value): return String(value)
        case .date(let value): return "CAST(\(value.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .bool(let value): return value ? "YES" : "NO"
        case .array(let values): return "{" + values.map(\.description).joined(separator: ", ") + "}"
        case .null: return "nil"
        }
    }

    /// A value from an argument of `MetadataPredicate(format:…)`: strings, numbers, Booleans, dates,
    /// URLs (their paths) and arrays of these; nil for anything else.
    init?(argument: Any) {
        switch argument {
        case let value as String: self = .string(value)
        case let value as NSString: self = .string(value as String)
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as Int32: self = .integer(Int64(value))
        case let value as UInt: self = .integer(Int64(clamping: value))
        case let value as UInt64: self = .integer(Int64(clamping: value))
        case let value as Double: self = .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as Date: self = .date(value)
        case let value as NSDate: self = .date(value as Date)
        case let value as URL: self = .string(value.path)
        case let value as NSNumber: self = .double(value.doubleValue)
        case let values as [Any]:
            var converted: [MetadataValue] = []
            for value in values {
                guard let item = MetadataValue(argument: value) else { return nil }
                converted.append(item)
            }
            self = .array(converted)
        default: return nil
        }
    }
}
