import Foundation

/// `NSComparisonPredicate`'s name: Folio's comparison predicates are ``MetadataPredicate``s, so
/// code that builds one as Apple's does (`ComparisonPredicate(leftExpression:rightExpression:
/// modifier:type:options:)`) gets one a query takes.
public typealias ComparisonPredicate = MetadataPredicate

extension MetadataPredicate {
    /// How a comparison treats a multi-valued attribute (`NSComparisonPredicate.Modifier`, with
    /// Apple's raw values).
    public enum Modifier: UInt, Sendable {
        /// The values compared as they are.
        case direct = 0
        /// Every value must match (`ALL`).
        case all = 1
        /// One value must match (`ANY`).
        case any = 2
    }

    /// A comparison of `lhs` with `rhs`, as `NSComparisonPredicate(leftExpression:rightExpression:
    /// modifier:type:options:)` builds it: one side an attribute (`MetadataExpression(forKeyPath:)`),
    /// the other a constant, compared as `predicateFormat`'s text would compare them. A comparison
    /// the format syntax refuses (two constants, `ANY` on a single-valued attribute, a constant of
    /// the wrong type) stops the program, as Apple's raises.
    public init(
        leftExpression lhs: MetadataExpression, rightExpression rhs: MetadataExpression, modifier: Modifier, type: Operator,
        options: Options = []
    ) {
        func side(_ expression: MetadataExpression, _ arguments: inout [Any]) -> String {
            switch expression.expressionType {
            case .keyPath:
                arguments.append(expression.keyPath)
                return "%K"
            case .constantValue:
                guard let value = expression.constantValue, !(value is NSNull) else { return "nil" }
                arguments.append(value)
                return "%@"
            }
        }
        var arguments: [Any] = []
        let left = side(lhs, &arguments)
        let right = side(rhs, &arguments)
        let quantifier = switch modifier {
        case .direct: ""
        case .all: "ALL "
        case .any: "ANY "
        }
        self.init(format: "\(quantifier)\(left) \(type.rawValue)\(options.formatSuffix) \(right)", argumentArray: arguments)
    }
}

extension MetadataPredicate.Options {
    /// The options as the format syntax writes them after an operator (`[cd]`); empty for none.
    var formatSuffix: String {
        guard !isEmpty else { return "" }
        let letters: [(Self, String)] = [(.caseInsensitive, "c"), (.diacriticInsensitive, "d"), (.normalized, "n"), (.words, "w")]
        return "[" + letters.filter { contains($0.0) }.map(\.1).joined() + "]"
    }
}

extension MetadataPredicate.Operator {
    // `NSComparisonPredicate.Operator`'s names for the operators Folio names otherwise.

    /// `<` (Apple's name).
    public static let lessThan = Self.less
    /// `<=` (Apple's name).
    public static let lessThanOrEqualTo = Self.lessOrEqual
    /// `>` (Apple's name).
    public static let greaterThan = Self.greater
    /// `>=` (Apple's name).
    public static let greaterThanOrEqualTo = Self.greaterOrEqual
    /// `==` (Apple's name).
    public static let equalTo = Self.equal
    /// `!=` (Apple's name).
    public static let notEqualTo = Self.notEqual
}
