// Apple's metadata attribute names (MD.h), which Foundation lacks on Linux. The values are Apple's,
// so that predicates written as strings (`kMDItemFSName LIKE '*.txt'`) mean the same.
#if !canImport(Darwin)
/// The item's file name.
public let NSMetadataItemFSNameKey = "kMDItemFSName"
/// The name shown to the user.
public let NSMetadataItemDisplayNameKey = "kMDItemDisplayName"
/// The item's URL.
public let NSMetadataItemURLKey = "kMDItemURL"
/// The item's path.
public let NSMetadataItemPathKey = "kMDItemPath"
/// The size in bytes.
public let NSMetadataItemFSSizeKey = "kMDItemFSSize"
/// When the item was created.
public let NSMetadataItemFSCreationDateKey = "kMDItemFSCreationDate"
/// When the item's contents last changed.
public let NSMetadataItemFSContentChangeDateKey = "kMDItemFSContentChangeDate"
/// The item's uniform type identifier.
public let NSMetadataItemContentTypeKey = "kMDItemContentType"
/// The item's type and every type it conforms to.
public let NSMetadataItemContentTypeTreeKey = "kMDItemContentTypeTree"
/// Whether the item is in a ubiquity container (the Drive) or a provider.
public let NSMetadataItemIsUbiquitousKey = "NSMetadataItemIsUbiquitousKey"
/// Whether the item has unresolved conflict versions.
public let NSMetadataUbiquitousItemHasUnresolvedConflictsKey = "NSMetadataUbiquitousItemHasUnresolvedConflictsKey"
/// Whether the item is being downloaded.
public let NSMetadataUbiquitousItemIsDownloadingKey = "NSMetadataUbiquitousItemIsDownloadingKey"
/// Whether the item's contents reached the server.
public let NSMetadataUbiquitousItemIsUploadedKey = "NSMetadataUbiquitousItemIsUploadedKey"
/// Whether the item is being uploaded.
public let NSMetadataUbiquitousItemIsUploadingKey = "NSMetadataUbiquitousItemIsUploadingKey"
/// How much of the item is downloaded, 0–100.
public let NSMetadataUbiquitousItemPercentDownloadedKey = "NSMetadataUbiquitousItemPercentDownloadedKey"
/// How much of the item is uploaded, 0–100.
public let NSMetadataUbiquitousItemPercentUploadedKey = "NSMetadataUbiquitousItemPercentUploadedKey"
/// One of the `NSMetadataUbiquitousItemDownloadingStatus…` values.
public let NSMetadataUbiquitousItemDownloadingStatusKey = "NSMetadataUbiquitousItemDownloadingStatusKey"
/// No local copy.
public let NSMetadataUbiquitousItemDownloadingStatusNotDownloaded = "NSMetadataUbiquitousItemDownloadingStatusNotDownloaded"
/// A local copy, perhaps not the newest.
public let NSMetadataUbiquitousItemDownloadingStatusDownloaded = "NSMetadataUbiquitousItemDownloadingStatusDownloaded"
/// The newest contents are local.
public let NSMetadataUbiquitousItemDownloadingStatusCurrent = "NSMetadataUbiquitousItemDownloadingStatusCurrent"
/// Whether the item lives outside the app's container.
public let NSMetadataUbiquitousItemIsExternalDocumentKey = "NSMetadataUbiquitousItemIsExternalDocumentKey"
/// The name of the container that holds the original.
public let NSMetadataUbiquitousItemContainerDisplayNameKey = "NSMetadataUbiquitousItemContainerDisplayNameKey"
/// The reference document in the app's container for an external document.
public let NSMetadataUbiquitousItemURLInLocalContainerKey = "NSMetadataUbiquitousItemURLInLocalContainerKey"
/// Why the last try to upload the item failed: an `NSError` (`MetadataItem.value(forAttribute:)`).
public let NSMetadataUbiquitousItemUploadingErrorKey = "NSMetadataUbiquitousItemUploadingErrorKey"
/// Why the last try to download the item failed: an `NSError` (`MetadataItem.value(forAttribute:)`).
public let NSMetadataUbiquitousItemDownloadingErrorKey = "NSMetadataUbiquitousItemDownloadingErrorKey"
/// Whether a download of the item was requested (it runs, or the item is kept downloaded).
public let NSMetadataUbiquitousItemDownloadRequestedKey = "NSMetadataUbiquitousItemDownloadRequestedKey"
/// Whether the item is shared with other people (never, in Folio's drive).
public let NSMetadataUbiquitousItemIsSharedKey = "NSMetadataUbiquitousItemIsSharedKey"
/// A result's content relevance, 0 to 1, for a query that searches `kMDItemTextContent`
/// (`MetadataQuery.value(ofAttribute:forResultAt:)`, and a sort key): set by the daemon's index,
/// nil from the in-process search.
public let NSMetadataQueryResultContentRelevanceAttribute = "kMDQueryResultContentRelevance"
#endif
