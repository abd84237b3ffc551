import Foundation

extension MetadataAttribute {
    private func compare(_ op: MetadataPredicate.Operator, _ value: MetadataValue, _ options: MetadataPredicate.Options = []) -> MetadataPredicate {
        MetadataPredicate(node: .comparison(.init(attribute: self, op: op, value: value, options: options, quantifier: .any)))
    }

    /// `LIKE`: `*` matches any run of characters, `?` one.
    public func like(_ pattern: String, _ options: MetadataPredicate.Options = []) -> MetadataPredicate { compare(.like, .string(pattern), options) }
    /// `BEGINSWITH`.
    public func beginsWith(_ prefix: String, _ options: MetadataPredicate.Options = []) -> MetadataPredicate {
        compare(.beginsWith, .string(prefix), options)
    }
    /// `ENDSWITH`.
    public func endsWith(_ suffix: String, _ options: MetadataPredicate.Options = []) -> MetadataPredicate {
        compare(.endsWith, .string(suffix), options)
    }
    /// `CONTAINS`.
    public func contains(_ text: String, _ options: MetadataPredicate.Options = []) -> MetadataPredicate { compare(.contains, .string(text), options) }
    /// `MATCHES`: the whole value matches the regular expression.
    public func matches(_ expression: String, _ options: MetadataPredicate.Options = []) -> MetadataPredicate {
        compare(.matches, .string(expression), options)
    }
    /// `==`, with options for text.
    public func equals(_ value: MetadataValue, _ options: MetadataPredicate.Options = []) -> MetadataPredicate { compare(.equal, value, options) }
    /// `IN {…}`.
    public func isIn(_ values: [MetadataValue]) -> MetadataPredicate { compare(.in, .array(values)) }
    /// `BETWEEN {low, high}`.
    public func between(_ low: MetadataValue, _ high: MetadataValue) -> MetadataPredicate { compare(.between, .array([low, high])) }

    /// `==`.
    public static func == (lhs: MetadataAttribute, rhs: MetadataValue) -> MetadataPredicate { lhs.compare(.equal, rhs) }
    /// `!=`.
    public static func != (lhs: MetadataAttribute, rhs: MetadataValue) -> MetadataPredicate { lhs.compare(.notEqual, rhs) }
    /// `<`.
    public static func < (lhs: MetadataAttribute, rhs: MetadataValue) -> MetadataPredicate { lhs.compare(.less, rhs) }
    /// `<=`.
    public static func <= (lhs: MetadataAttribute, rhs: MetadataValue) -> MetadataPredicate { lhs.compare(.lessOrEqual, rhs) }
    /// `>`.
    public static func > (lhs: MetadataAttribute, rhs: MetadataValue) -> MetadataPredicate { lhs.compare(.greater, rhs) }
    /// `>=`.
    public static func >= (lhs: MetadataAttribute, rhs: MetadataValue) -> MetadataPredicate { lhs.compare(.greaterOrEqual, rhs) }
}

extension MetadataPredicate {
    /// Both hold.
    public static func && (lhs: MetadataPredicate, rhs: MetadataPredicate) -> MetadataPredicate {
        MetadataPredicate(node: .and(lhs.flattened(and: true) + rhs.flattened(and: true)))
    }

    /// Either holds.
    public static func || (lhs: MetadataPredicate, rhs: MetadataPredicate) -> MetadataPredicate {
        MetadataPredicate(node: .or(lhs.flattened(and: false) + rhs.flattened(and: false)))
    }

    /// Does not hold.
    public static prefix func ! (predicate: MetadataPredicate) -> MetadataPredicate { MetadataPredicate(node: .not(predicate.node)) }

    private func flattened(and: Bool) -> [Node] {
        switch node {
        case .and(let nodes) where and: return nodes
        case .or(let nodes) where !and: return nodes
        default: return [node]
        }
    }
}

extension MetadataValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral {
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
