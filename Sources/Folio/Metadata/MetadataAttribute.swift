/// The attributes Folio's metadata knows: Apple's names, each with its kind, so predicates are
/// checked before they run.
public struct MetadataAttribute: Sendable, Hashable {
    /// What an attribute holds.
    public enum Kind: Sendable, Hashable {
        case string, number, date, bool
        /// Several strings (the content type tree, tags): a comparison holds when it holds for one.
        case strings
    }

    /// Apple's attribute name (`kMDItemFSName`, `NSMetadataUbiquitousItem…Key`).
    public let name: String
    public let kind: Kind

    /// The file name.
    public static let fsName = MetadataAttribute(name: "kMDItemFSName", kind: .string)
    /// The name shown to the user.
    public static let displayName = MetadataAttribute(name: "kMDItemDisplayName", kind: .string)
    /// The URL (compared as its path).
    public static let url = MetadataAttribute(name: "kMDItemURL", kind: .string)
    /// The path.
    public static let path = MetadataAttribute(name: "kMDItemPath", kind: .string)
    /// The size in bytes.
    public static let fsSize = MetadataAttribute(name: "kMDItemFSSize", kind: .number)
    /// When the item was created.
    public static let fsCreationDate = MetadataAttribute(name: "kMDItemFSCreationDate", kind: .date)
    /// When its contents last changed.
    public static let fsContentChangeDate = MetadataAttribute(name: "kMDItemFSContentChangeDate", kind: .date)
    /// Its uniform type identifier.
    public static let contentType = MetadataAttribute(name: "kMDItemContentType", kind: .string)
    /// Its type and every type that type conforms to.
    public static let contentTypeTree = MetadataAttribute(name: "kMDItemContentTypeTree", kind: .strings)
    /// The document's text, Apple's `kMDItemTextContent`: searchable, never returned whole.
    public static let textContent = MetadataAttribute(name: "kMDItemTextContent", kind: .string)
    /// The user's tags (`user.xdg.tags`), Apple's `kMDItemUserTags`.
    public static let userTags = MetadataAttribute(name: "kMDItemUserTags", kind: .strings)
    /// When the item was last opened or used, Apple's `kMDItemLastUsedDate`.
    public static let lastUsedDate = MetadataAttribute(name: "kMDItemLastUsedDate", kind: .date)
    /// A folder's place among the favorites (Folio's; higher first).
    public static let favoriteRank = MetadataAttribute(name: "kMDItemFavoriteRank", kind: .number)
    /// In the Drive or a provider.
    public static let isUbiquitous = MetadataAttribute(name: "NSMetadataItemIsUbiquitousKey", kind: .bool)
    /// Unresolved conflict versions exist.
    public static let hasUnresolvedConflicts = MetadataAttribute(name: "NSMetadataUbiquitousItemHasUnresolvedConflictsKey", kind: .bool)
    /// Being downloaded.
    public static let isDownloading = MetadataAttribute(name: "NSMetadataUbiquitousItemIsDownloadingKey", kind: .bool)
    /// Uploaded.
    public static let isUploaded = MetadataAttribute(name: "NSMetadataUbiquitousItemIsUploadedKey", kind: .bool)
    /// Being uploaded.
    public static let isUploading = MetadataAttribute(name: "NSMetadataUbiquitousItemIsUploadingKey", kind: .bool)
    /// Percent downloaded.
    public static let percentDownloaded = MetadataAttribute(name: "NSMetadataUbiquitousItemPercentDownloadedKey", kind: .number)
    /// Percent uploaded.
    public static let percentUploaded = MetadataAttribute(name: "NSMetadataUbiquitousItemPercentUploadedKey", kind: .number)
    /// The downloading status (one of the `NSMetadataUbiquitousItemDownloadingStatus…` strings).
    public static let downloadingStatus = MetadataAttribute(name: "NSMetadataUbiquitousItemDownloadingStatusKey", kind: .string)
    /// Why the last try to upload it failed (Apple's value is an `NSError`; Folio's, the reason).
    public static let uploadingError = MetadataAttribute(name: "NSMetadataUbiquitousItemUploadingErrorKey", kind: .string)
    /// Why the last try to download it failed (Apple's value is an `NSError`; Folio's, the reason).
    public static let downloadingError = MetadataAttribute(name: "NSMetadataUbiquitousItemDownloadingErrorKey", kind: .string)
    /// A download was requested (it runs, or the item is pinned).
    public static let downloadRequested = MetadataAttribute(name: "NSMetadataUbiquitousItemDownloadRequestedKey", kind: .bool)
    /// Shared with other people (never, in Folio's drive).
    public static let isShared = MetadataAttribute(name: "NSMetadataUbiquitousItemIsSharedKey", kind: .bool)
    /// Kept downloaded: it, or a folder above it, is pinned (`folio drive pin`). Folio's own key.
    public static let isPinned = MetadataAttribute(name: "FolioUbiquitousItemIsPinnedKey", kind: .bool)
    /// Outside the app's container.
    public static let isExternalDocument = MetadataAttribute(name: "NSMetadataUbiquitousItemIsExternalDocumentKey", kind: .bool)
    /// The name of the container holding the original.
    public static let containerDisplayName = MetadataAttribute(name: "NSMetadataUbiquitousItemContainerDisplayNameKey", kind: .string)
    /// The reference document in the app's container.
    public static let urlInLocalContainer = MetadataAttribute(name: "NSMetadataUbiquitousItemURLInLocalContainerKey", kind: .string)

    /// How well a result's text matches the query's `kMDItemTextContent` comparisons, 0 to 1 (higher
    /// is better; Apple's `NSMetadataQueryResultContentRelevanceAttribute`). Only results of a query
    /// the daemon's index runs have it: no predicate can select by it.
    public static let contentRelevance = MetadataAttribute(name: "kMDQueryResultContentRelevance", kind: .number)

    /// Every attribute, by name.
    public static let all: [String: MetadataAttribute] = Dictionary(
        uniqueKeysWithValues: [
            fsName, displayName, url, path, fsSize, fsCreationDate, fsContentChangeDate, contentType, contentTypeTree, textContent, userTags,
            lastUsedDate, favoriteRank, isUbiquitous, hasUnresolvedConflicts, isDownloading, isUploaded, isUploading,
            percentDownloaded, percentUploaded, downloadingStatus, uploadingError, downloadingError, isPinned, isExternalDocument,
            containerDisplayName, urlInLocalContainer, downloadRequested, isShared, contentRelevance,
        ].map { ($0.name, $0) })

    /// The attribute named `name`, or nil.
    public static func named(_ name: String) -> MetadataAttribute? { all[name] }
}
