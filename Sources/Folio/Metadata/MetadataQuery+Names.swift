public import Foundation

#if !canImport(Darwin)
extension NSNotification.Name {
    /// The query began gathering its initial results.
    public static let NSMetadataQueryDidStartGathering = NSNotification.Name("NSMetadataQueryDidStartGatheringNotification")
    /// More initial results arrived.
    public static let NSMetadataQueryGatheringProgress = NSNotification.Name("NSMetadataQueryGatheringProgressNotification")
    /// The initial results are complete.
    public static let NSMetadataQueryDidFinishGathering = NSNotification.Name("NSMetadataQueryDidFinishGatheringNotification")
    /// Results changed; the user info holds the added, changed and removed items.
    public static let NSMetadataQueryDidUpdate = NSNotification.Name("NSMetadataQueryDidUpdateNotification")
}

/// `userInfo` key of `NSMetadataQueryDidUpdate`: the items that now match.
public let NSMetadataQueryUpdateAddedItemsKey = "kMDQueryUpdateAddedItems"
/// `userInfo` key of `NSMetadataQueryDidUpdate`: matching items whose attributes changed.
public let NSMetadataQueryUpdateChangedItemsKey = "kMDQueryUpdateChangedItems"
/// `userInfo` key of `NSMetadataQueryDidUpdate`: the items that no longer match.
public let NSMetadataQueryUpdateRemovedItemsKey = "kMDQueryUpdateRemovedItems"

/// The `Documents` folder of the app's ubiquity container (in the Drive).
public let NSMetadataQueryUbiquitousDocumentsScope = "NSMetadataQueryUbiquitousDocumentsScope"
/// The app's ubiquity container, without its `Documents` folder.
public let NSMetadataQueryUbiquitousDataScope = "NSMetadataQueryUbiquitousDataScope"
/// Documents outside the container the app may reach (opened or moved through the picker).
public let NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope = "NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope"
#endif

/// A query's notifications as values, for `MetadataQuery.events`.
public enum MetadataQueryEvent: Sendable {
    /// `NSMetadataQueryDidStartGathering`.
    case didStartGathering
    /// `NSMetadataQueryGatheringProgress`, with the results so far.
    case gatheringProgress(resultCount: Int)
    /// `NSMetadataQueryDidFinishGathering`.
    case didFinishGathering(resultCount: Int)
    /// `NSMetadataQueryDidUpdate`.
    case didUpdate(added: [MetadataItem], changed: [MetadataItem], removed: [MetadataItem])
}
