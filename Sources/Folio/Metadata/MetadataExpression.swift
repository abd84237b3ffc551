import Foundation

/// One side of a comparison predicate built as Apple's code builds `NSComparisonPredicate`s
/// (`NSExpression`): an attribute's key path, or a constant. Foundation on Linux declares
/// `NSExpression` without implementing it, so a port names this type instead
/// (`typealias NSExpression = MetadataExpression`, as with `NSPredicate`).
public final class MetadataExpression: @unchecked Sendable {
    /// What an expression is (`NSExpression.ExpressionType`, with Apple's raw values for the two
    /// kinds a metadata predicate takes).
    public enum ExpressionType: UInt, Sendable {
        /// A constant value (`forConstantValue:`).
        case constantValue = 0
        /// An attribute, named by its key (`forKeyPath:`).
        case keyPath = 3
    }

    /// The expression's kind.
    public let expressionType: ExpressionType
    private let key: String?
    private let constant: Any?

    /// The attribute `keyPath` names (`kMDItemFSName`, `NSMetadataItemFSSizeKey` …).
    public init(forKeyPath keyPath: String) {
        expressionType = .keyPath
        key = keyPath
        constant = nil
    }

    /// A constant: a string, number, Boolean, date, URL, or an array of these.
    public init(forConstantValue value: Any?) {
        expressionType = .constantValue
        key = nil
        constant = value
    }

    /// The key path of a key-path expression; asking a constant for one stops the program, as
    /// Apple's raises.
    public var keyPath: String {
        guard let key else { preconditionFailure("MetadataExpression.keyPath: a constant expression has no key path") }
        return key
    }

    /// The value of a constant expression; asking a key path for one stops the program, as
    /// Apple's raises.
    public var constantValue: Any? {
        precondition(expressionType == .constantValue, "MetadataExpression.constantValue: a key-path expression has no constant value")
        return constant
    }
}
