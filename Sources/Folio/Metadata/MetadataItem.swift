public import Foundation
import FolioSystem
import Synchronization
import UniformTypes

/// One result of a metadata query (Apple's `NSMetadataItem`): an item's attributes by Apple's
/// names. The same object stands for the same file across a query's updates. Attributes are worked
/// out from the item's facts when first asked, then kept.
open class MetadataItem: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private var facts: MetadataFacts
    private var cache: [String: MetadataValue?] = [:]

    init(facts: MetadataFacts) {
        self.facts = facts
    }

    /// The value of `key` (`NSMetadataItemFSNameKey` …): a `String`, `URL`, `Date`, `NSNumber` or
    /// `[String]`; nil when the item has none.
    open func value(forAttribute key: String) -> Any? {
        guard let attribute = MetadataAttribute.named(key), let value = metadataValue(attribute) else { return nil }
        if attribute == .url, case .string(let path) = value { return URL(fileURLWithPath: path) }
        // The transfer errors are `NSError`s, as Apple's (predicates compare their reasons).
        if attribute == .uploadingError || attribute == .downloadingError, case .string(let reason) = value {
            return NSError.ubiquitousTransferFailure(reason)
        }
        return Self.object(value)
    }

    /// The values of several attributes.
    open func values(forAttributes keys: [String]) -> [String: Any]? {
        var result: [String: Any] = [:]
        for key in keys { if let value = value(forAttribute: key) { result[key] = value } }
        return result
    }

    /// The attributes the item has.
    open var attributes: [String] { MetadataFacts.fileAttributes.filter { metadataValue($0) != nil }.map(\.name).sorted() }

    /// The typed value, as predicates see it.
    func metadataValue(_ attribute: MetadataAttribute) -> MetadataValue? {
        lock.withLock {
            if let known = cache[attribute.name] { return known }
            let value = facts.value(attribute)
            cache[attribute.name] = .some(value)
            return value
        }
    }

    var path: String { lock.withLock { facts.path } }

    /// Replaces the facts; returns whether anything changed.
    func update(_ facts: MetadataFacts) -> Bool {
        lock.withLock {
            guard self.facts != facts else { return false }
            self.facts = facts
            cache.removeAll()
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
}

/// What Folio knows of an item, from which its metadata attributes are computed — one place for
/// the in-process search (from `lstat`) and the daemon's index (from its rows), so both give the
/// same values. The type and tags, when not given, come from the name and the file.
package struct MetadataFacts: Sendable, Equatable {
    package var path: String
    package var name: String
    package var kind: FileStatus.Kind
    package var size: Int64
    /// Seconds since 1970.
    package var modified: Double
    /// The type identifier; nil: from the name's extension.
    package var typeIdentifier: String?
    /// The tags; nil: read from the file when asked.
    package var tags: [String]?
    package var lastUsed: Double?
    package var favoriteRank: Int64?
    /// One of the `NSMetadataUbiquitousItemDownloadingStatus…` values for an item in the drive
    /// (nil otherwise).
    package var downloadingStatus: String?
    /// Where a drive item stands with the server, as the daemon's index knows it from the drive's
    /// journal (nil outside the drive, and in the in-process search, which has no journal).
    package var sync: UbiquitousSyncState?
    /// How well the text matches the query's text comparisons, 0 to 1: set by the daemon's index
    /// for a query that reads `kMDItemTextContent`, nil otherwise.
    package var relevance: Double?

    package init(
        path: String, name: String, kind: FileStatus.Kind, size: Int64, modified: Double, typeIdentifier: String? = nil,
        tags: [String]? = nil, lastUsed: Double? = nil, favoriteRank: Int64? = nil, downloadingStatus: String? = nil, sync: UbiquitousSyncState? = nil,
        relevance: Double? = nil
    ) {
        self.relevance = relevance
        self.downloadingStatus = downloadingStatus
        self.sync = sync
        self.path = path
        self.name = name
        self.kind = kind
        self.size = size
        self.modified = modified
        self.typeIdentifier = typeIdentifier
        self.tags = tags
        self.lastUsed = lastUsed
        self.favoriteRank = favoriteRank
    }

    package init(path: String, name: String, status: FileStatus) {
        self.init(path: path, name: name, kind: status.kind, size: status.size, modified: status.modificationTime)
    }

    /// An item's facts from its status: its own (a file in the drive replica `driveRoot` is
    /// downloaded and current), or for a drive placeholder's stub (`name.folio-cloud`), its
    /// document's — path, name, size, date and type from the stub, not downloaded. Nil for a stub
    /// whose document is here (the document is the item) or that is not a valid stub. The same
    /// rule as the daemon's index.
    package static func item(path: String, name: String, status: FileStatus, driveRoot: String? = nil) -> MetadataFacts? {
        guard status.kind == .regular, PlaceholderStub.isStubName(name) else {
            var facts = MetadataFacts(path: path, name: name, status: status)
            facts.downloadingStatus = downloadingStatus(ofItemAt: path, kind: status.kind, driveRoot: driveRoot)
            return facts
        }
        let document = PlaceholderStub.documentName(ofStub: path)
        // The document itself absent, where this process reaches the folder (``PathRedirect``).
        guard access(PathRedirect.physical(document), F_OK) != 0, status.size <= PlaceholderStub.maximumSize, let stub = PlaceholderStub.read(at: path) else { return nil }
        return MetadataFacts(
            path: document, name: stub.name, kind: .regular, size: stub.size, modified: stub.modified ?? status.modificationTime,
            typeIdentifier: stub.contentType.flatMap { $0.isEmpty || $0.utf8.count >= 256 ? nil : $0 }, tags: [],
            downloadingStatus: NSMetadataUbiquitousItemDownloadingStatusNotDownloaded)
    }

    /// `…StatusCurrent` for a file in the drive replica `driveRoot` (its content is here; a
    /// placeholder's document is `…NotDownloaded`), nil for anything else.
    package static func downloadingStatus(ofItemAt path: String, kind: FileStatus.Kind, driveRoot: String?) -> String? {
        guard kind == .regular, let driveRoot, path.hasPrefix(driveRoot + "/") else { return nil }
        return NSMetadataUbiquitousItemDownloadingStatusCurrent
    }

    /// The facts with the tags read from the file (so that two readings compare).
    func resolvingTags() -> MetadataFacts {
        var copy = self
        if copy.tags == nil { copy.tags = kind == .symbolicLink ? [] : FileTags.tags(atPath: path) }
        return copy
    }

    /// The attributes an item may have (the rest need a provider).
    static let fileAttributes: [MetadataAttribute] = [
        .fsName, .displayName, .path, .url, .fsSize, .fsContentChangeDate, .fsCreationDate, .contentType, .contentTypeTree, .userTags,
        .lastUsedDate, .favoriteRank, .downloadingStatus, .isUbiquitous, .isUploaded, .isUploading, .isDownloading, .isPinned,
        .uploadingError, .downloadingError, .percentDownloaded, .percentUploaded, .downloadRequested, .isShared,
    ]

    /// One attribute, computed only when asked (a predicate on the name never pays for the type
    /// lookup).
    package func value(_ attribute: MetadataAttribute, type known: UTType? = nil) -> MetadataValue? {
        switch attribute {
        case .fsName, .displayName: return .string(name)
        case .path, .url: return .string(path)
        case .fsSize: return .integer(kind == .directory ? 0 : size)
        case .fsContentChangeDate, .fsCreationDate: return .date(Date(timeIntervalSince1970: modified))
        case .contentType: return .string(typeIdentifier ?? (known ?? type).identifier)
        case .contentTypeTree: return .array(MetadataTypeTrees.shared.tree(of: known ?? type).map { .string($0) })
        case .userTags:
            let tags = tags ?? FileTags.tags(atPath: path)
            return tags.isEmpty ? nil : .array(tags.map { .string($0) })
        case .lastUsedDate: return lastUsed.map { .date(Date(timeIntervalSince1970: $0)) }
        case .favoriteRank: return favoriteRank.map { .integer($0) }
        case .downloadingStatus: return downloadingStatus.map { .string($0) }
        // What is in the drive, downloaded or not, is ubiquitous.
        case .isUbiquitous: return downloadingStatus == nil ? nil : .bool(true)
        case .isUploaded: return sync.map { .bool($0.isUploaded) }
        case .isUploading: return sync.map { .bool(!$0.isUploaded) }
        case .isDownloading: return sync.map { .bool($0.isDownloading) }
        case .isPinned: return sync.map { .bool($0.isPinned) }
        // A download was asked for: it runs, or the item is kept downloaded (pinned).
        case .downloadRequested: return sync.map { .bool($0.isDownloading || $0.isPinned) }
        // Folio's drive shares nothing with other people.
        case .isShared: return downloadingStatus == nil ? nil : .bool(false)
        case .uploadingError: return sync.flatMap { $0.isUploaded ? nil : $0.error.map { .string($0) } }
        case .downloadingError: return sync.flatMap { $0.isUploaded ? $0.error.map { .string($0) } : nil }
        // As Apple's: how far the download is while it runs, else 100 for what is here and 0 for a
        // placeholder; an upload is 0 until the server has the content (providers report no
        // progress of a write), then 100.
        case .percentDownloaded:
            return sync.map { .double($0.percentDownloaded ?? (downloadingStatus == NSMetadataUbiquitousItemDownloadingStatusCurrent ? 100 : 0)) }
        case .percentUploaded: return sync.map { .double($0.isUploaded ? 100 : 0) }
        case .contentRelevance: return relevance.map { .double($0) }
        default: return nil
        }
    }

    /// The item's type: the given identifier's (the daemon's index gives it), else as content
    /// detection finds it (`UTType.contentType(ofItemAt:)`: the name, then the first bytes when
    /// the name does not settle it), else by its name and kind.
    package var type: UTType {
        if let typeIdentifier { return UTType(typeIdentifier) ?? .data }
        return (try? UTType.contentType(ofItemAt: URL(fileURLWithPath: path)).type) ?? Self.type(name: name, kind: kind)
    }

    package static func type(name: String, kind: FileStatus.Kind) -> UTType {
        switch kind {
        case .directory: return .folder
        case .symbolicLink: return .symbolicLink
        default:
            return .ofFile(named: name)
        }
    }
}

/// Each type's conformance tree (itself, then what it conforms to, nearest first), worked out once.
final class MetadataTypeTrees: Sendable {
    static let shared = MetadataTypeTrees()
    private let trees = Mutex<[String: [String]]>([:])

    func tree(of type: UTType) -> [String] {
        if let found = trees.withLock({ $0[type.identifier] }) { return found }
        let tree = ([type] + type.supertypesNearestFirst).map(\.identifier)
        trees.withLock { if $0.count < 4096 { $0[type.identifier] = tree } }
        return tree
    }
}

/// How a query orders its results (`NSSortDescriptor(key:ascending:)`, whose key-value coding
/// Foundation lacks on Linux): by an attribute's value.
public struct MetadataSortDescriptor: Sendable, Hashable {
    /// The attribute (`NSMetadataItemFSNameKey` …).
    public var key: String
    /// Smallest first. A result without the attribute is the smallest, as `NSSortDescriptor`
    /// orders nil: first when ascending, last when descending.
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

extension MetadataFacts {
    /// Text folded as `[cd]` comparisons fold it (case and diacritics), for the index's search
    /// column: a name matching a pattern in any mode also matches it folded.
    package static func searchFold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            guard text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return text }
            return String(decoding: text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
        }
        // Canonically equivalent spellings (composed or not, the Kelvin sign and K) fold alike.
        let composed = text.precomposedStringWithCanonicalMapping
        return MetadataPredicate.Comparison.fold(composed, [.caseInsensitive, .diacriticInsensitive]).precomposedStringWithCanonicalMapping
    }
}

extension NSError {
    /// A drive transfer's failure as Apple reports it (`NSMetadataUbiquitousItemUploadingErrorKey`,
    /// `URLResourceValues.ubiquitousItemDownloadingError` …): Cocoa's domain,
    /// `ubiquitousFileUnavailable`, the engine's reason as its description.
    static func ubiquitousTransferFailure(_ reason: String) -> NSError {
        NSError(domain: NSCocoaErrorDomain, code: CocoaError.ubiquitousFileUnavailable.rawValue, userInfo: [NSLocalizedDescriptionKey: reason])
    }
}
