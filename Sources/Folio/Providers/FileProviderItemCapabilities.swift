/// What the user may do with an item (Apple's `NSFileProviderItemCapabilities`, with Apple's bits).
/// They gate the user interface only: a change made in a terminal still reaches the provider, which
/// must handle it.
public struct FileProviderItemCapabilities: OptionSet, Hashable, Sendable, Codable {
    /// The bits.
    public var rawValue: UInt
    /// Capabilities from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The content can be read (for a folder: its children can be listed).
    public static let allowsReading = FileProviderItemCapabilities(rawValue: 1 << 0)
    /// The content can be written (for a folder: children can be added).
    public static let allowsWriting = FileProviderItemCapabilities(rawValue: 1 << 1)
    /// The item can move to another folder.
    public static let allowsReparenting = FileProviderItemCapabilities(rawValue: 1 << 2)
    /// The item can be renamed.
    public static let allowsRenaming = FileProviderItemCapabilities(rawValue: 1 << 3)
    /// The item can be moved to the trash.
    public static let allowsTrashing = FileProviderItemCapabilities(rawValue: 1 << 4)
    /// The item can be deleted.
    public static let allowsDeleting = FileProviderItemCapabilities(rawValue: 1 << 5)
    /// The item's local content can be evicted.
    public static let allowsEvicting = FileProviderItemCapabilities(rawValue: 1 << 6)
    /// The item can be excluded from sync.
    public static let allowsExcludingFromSync = FileProviderItemCapabilities(rawValue: 1 << 7)

    /// A folder's children can be listed (the same bit as ``allowsReading``).
    public static let allowsContentEnumerating = allowsReading
    /// A folder's children can be added (the same bit as ``allowsWriting``).
    public static let allowsAddingSubItems = allowsWriting

    /// Everything but exclusion from sync.
    public static let allowsAll: FileProviderItemCapabilities = [
        .allowsReading, .allowsWriting, .allowsReparenting, .allowsRenaming, .allowsTrashing, .allowsDeleting, .allowsEvicting,
    ]
}
