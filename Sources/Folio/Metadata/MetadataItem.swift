public import Foundation
import FolioSystem
import UniformTypes

/// One result of a metadata query (Apple's `NSMetadataItem`): an item's attributes by Apple's
/// names. The same object stands for the same file across a query's updates.
open class MetadataItem: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String: MetadataValue]

    init(values: [String: MetadataValue]) {
        stored = values
    }

    /// The value of `key` (`NSMetadataItemFSNameKey` …): a `String`, `URL`, `Date`, `NSNumber` or
    /// `[String]`; nil when the item has none.
    open func value(forAttribute key: String) -> Any? {
        guard let value = lock.withLock({ stored[key] }) else { return nil }
        if key == MetadataAttribute.url.name, case .string(let path) = value { return URL(fileURLWithPath: path) }
        return Self.object(value)
    }

    /// The values of several attributes.
    open func values(forAttributes keys: [String]) -> [String: Any]? {
        var result: [String: Any] = [:]
        for key in keys { if let value = value(forAttribute: key) { result[key] = value } }
        return result
    }

    /// The attributes the item has.
    open var attributes: [String] { lock.withLock { Array(stored.keys).sorted() } }

    /// The typed value, as predicates see it.
    func metadataValue(_ attribute: MetadataAttribute) -> MetadataValue? { lock.withLock { stored[attribute.name] } }

    var path: String { lock.withLock { stored[MetadataAttribute.path.name]?.string ?? "" } }

    /// Replaces the values; returns whether anything changed.
    func update(_ values: [String: MetadataValue]) -> Bool {
        lock.withLock {
            guard stored != values else { return false }
            stored = values
            return true
        }
    }

    static func object(_ value: MetadataValue) -> Any? {
        switch value {
        case .string(let text): return text
        case .integer(let number): return NSNumber(value: number)
        case .double(let number): return NSNumber(value: number)
        case .bool(let flag): return NSNumber(value: flag)
        case .date(let date): return date
        case .array(let values): return values.compactMap { $0.string }
        case .null: return nil
        }
    }

    /// The attributes of a file, from its name and `lstat` status alone (no content read): the
    /// type comes from the name's extension, or `public.folder` for folders.
    static func values(path: String, name: String, status: FileStatus) -> [String: MetadataValue] {
        let type = type(name: name, status: status)
        var result: [String: MetadataValue] = [:]
        for attribute in fileAttributes { result[attribute.name] = value(attribute, path: path, name: name, status: status, type: type) }
        return result
    }

    /// The attributes `values(path:name:status:)` fills.
    static let fileAttributes: [MetadataAttribute] = [
        .fsName, .displayName, .path, .url, .fsSize, .fsContentChangeDate, .fsCreationDate, .contentType, .contentTypeTree, .userTags,
    ]

    /// One attribute of a file, computed only when asked (a predicate on the name never pays for
    /// the type lookup).
    static func value(_ attribute: MetadataAttribute, path: String, name: String, status: FileStatus, type known: UTType? = nil) -> MetadataValue? {
        switch attribute {
        case .fsName, .displayName: return .string(name)
        case .path, .url: return .string(path)
        case .fsSize: return .integer(status.kind == .directory ? 0 : status.size)
        case .fsContentChangeDate, .fsCreationDate: return .date(Date(timeIntervalSince1970: status.modificationTime))
        case .contentType: return .string((known ?? type(name: name, status: status)).identifier)
        case .contentTypeTree:
            let type = known ?? type(name: name, status: status)
            return .array(([type] + type.supertypesNearestFirst).map { .string($0.identifier) })
        case .userTags:
            let tags = FileTags.tags(atPath: path)
            return tags.isEmpty ? nil : .array(tags.map { .string($0) })
        default: return nil
        }
    }

    private static func type(name: String, status: FileStatus) -> UTType {
        switch status.kind {
        case .directory: return .folder
        case .symbolicLink: return .symbolicLink
        default:
            let suffix = (name as NSString).pathExtension
            return suffix.isEmpty ? .data : (UTType(filenameExtension: suffix) ?? .data)
        }
    }
}

/// How a query orders its results (`NSSortDescriptor(key:ascending:)`, whose key-value coding
/// Foundation lacks on Linux): by an attribute's value.
public struct MetadataSortDescriptor: Sendable, Hashable {
    /// The attribute (`NSMetadataItemFSNameKey` …).
    public var key: String
    /// Smallest first.
    public var ascending: Bool

    /// Orders by `key`.
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}

/// One value of a `valueListAttributes` attribute and how many results have it.
public struct MetadataQueryAttributeValueTuple {
    /// The attribute.
    public let attribute: String
    /// The value.
    public let value: Any?
    /// How many results have it.
    public let count: Int

    init(attribute: String, value: MetadataValue, count: Int) {
        self.attribute = attribute
        self.value = MetadataItem.object(value)
        self.count = count
    }
}

extension MetadataQueryAttributeValueTuple: @unchecked Sendable {}

/// The results that share a value of the first grouping attribute.
public struct MetadataQueryResultGroup {
    /// The grouping attribute.
    public let attribute: String
    /// The shared value.
    public let value: Any?
    /// The group's results (`MetadataItem`).
    public let results: [Any]
    /// Nil: one level of grouping.
    public let subgroups: [MetadataQueryResultGroup]? = nil
    /// `results.count`.
    public var resultCount: Int { results.count }
    /// One result.
    public func result(at index: Int) -> Any { results[index] }
}
