import Foundation

/// Replaces a query's results and their values as it hands them out (Apple's
/// `NSMetadataQueryDelegate`); both methods have defaults that replace nothing.
public protocol MetadataQueryDelegate: AnyObject {
    /// The object `results`, `result(at:)` and `enumerateResults` give for `result`.
    func metadataQuery(_ query: MetadataQuery, replacementObjectForResultObject result: MetadataItem) -> Any
    /// The value `value(ofAttribute:forResultAt:)` gives for an attribute's `attrValue`.
    func metadataQuery(_ query: MetadataQuery, replacementValueForAttribute attrName: String, value attrValue: Any) -> Any
}

extension MetadataQueryDelegate {
    /// The result itself.
    public func metadataQuery(_ query: MetadataQuery, replacementObjectForResultObject result: MetadataItem) -> Any { result }
    /// The value itself.
    public func metadataQuery(_ query: MetadataQuery, replacementValueForAttribute attrName: String, value attrValue: Any) -> Any { attrValue }
}
