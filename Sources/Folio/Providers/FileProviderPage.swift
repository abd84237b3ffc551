public import Foundation

/// Where an enumeration of a folder's items stands (Apple's `NSFileProviderPage`): opaque bytes of the
/// provider's, at most 500. A page the provider cannot continue from any more gives
/// ``FileProviderError/Code/pageExpired``, and the system starts over.
public struct FileProviderPage: RawRepresentable, Hashable, Sendable, Codable {
    /// The page's bytes.
    public var rawValue: Data
    /// A page from its bytes.
    public init(rawValue: Data) { self.rawValue = rawValue }
    /// A page from its bytes.
    public init(_ rawValue: Data) { self.rawValue = rawValue }

    /// The first page, items sorted by date.
    public static let initialPageSortedByDate = FileProviderPage(Data([0]))
    /// The first page, items sorted by name.
    public static let initialPageSortedByName = FileProviderPage(Data([1]))

    /// Whether this is one of the two first pages.
    public var isInitial: Bool { self == .initialPageSortedByDate || self == .initialPageSortedByName }

    /// The largest page, in bytes; a larger one interrupts the enumeration.
    public static let maximumLength = 500
}

/// A point in a provider's history of changes (Apple's `NSFileProviderSyncAnchor`): opaque bytes of
/// the provider's, at most 500. An anchor the provider no longer knows gives
/// ``FileProviderError/Code/syncAnchorExpired``, and the system enumerates everything again.
public struct FileProviderSyncAnchor: RawRepresentable, Hashable, Sendable, Codable {
    /// The anchor's bytes.
    public var rawValue: Data
    /// An anchor from its bytes.
    public init(rawValue: Data) { self.rawValue = rawValue }
    /// An anchor from its bytes.
    public init(_ rawValue: Data) { self.rawValue = rawValue }

    /// The largest anchor, in bytes; a larger one counts as expired.
    public static let maximumLength = 500
}
