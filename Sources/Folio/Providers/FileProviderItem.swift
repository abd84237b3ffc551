public import Foundation
public import UniformTypes

/// The file-system flags of an item (Apple's `NSFileProviderFileSystemFlags`).
public struct FileProviderFileSystemFlags: OptionSet, Hashable, Sendable, Codable {
    /// The bits.
    public var rawValue: UInt
    /// Flags from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The owner may execute the file.
    public static let userExecutable = FileProviderFileSystemFlags(rawValue: 1 << 0)
    /// The owner may read the item.
    public static let userReadable = FileProviderFileSystemFlags(rawValue: 1 << 1)
    /// The owner may write the item.
    public static let userWritable = FileProviderFileSystemFlags(rawValue: 1 << 2)
    /// The item is hidden.
    public static let hidden = FileProviderFileSystemFlags(rawValue: 1 << 3)
    /// The item's extension is hidden.
    public static let pathExtensionHidden = FileProviderFileSystemFlags(rawValue: 1 << 4)
}

/// An item of a provider (Apple's `NSFileProviderItemProtocol`): the three required properties and
/// the optional ones, each with a default, so a provider's own item type implements what it knows.
public protocol FileProviderItemProtocol: Sendable {
    /// The item's identifier, chosen by the provider.
    var itemIdentifier: FileProviderItemIdentifier { get }
    /// The folder the item is in (ignored for the root).
    var parentItemIdentifier: FileProviderItemIdentifier { get }
    /// The item's name in its folder.
    var filename: String { get }
    /// The item's type (`.folder` for folders, `.symbolicLink` for links).
    var contentType: UTType { get }
    /// What the user may do with the item.
    var capabilities: FileProviderItemCapabilities { get }
    /// The item's content and metadata versions.
    var itemVersion: FileProviderItemVersion { get }
    /// The content's size in bytes, when known.
    var documentSize: NSNumber? { get }
    /// How many children a folder has, when known.
    var childItemCount: NSNumber? { get }
    /// When the item was created.
    var creationDate: Date? { get }
    /// When the content last changed.
    var contentModificationDate: Date? { get }
    /// Executable, readable, writable, hidden.
    var fileSystemFlags: FileProviderFileSystemFlags { get }
    /// Extended attributes synced with the item.
    var extendedAttributes: [String: Data] { get }
    /// A symbolic link's target.
    var symlinkTargetPath: String? { get }
    /// When the user last used the item (per user, never shared).
    var lastUsedDate: Date? { get }
    /// The item's tags (per user).
    var tagData: Data? { get }
    /// The item's favorite rank (per user).
    var favoriteRank: NSNumber? { get }
    /// Whether the item is in the trash.
    var isTrashed: Bool { get }
    /// Whether the content is on the server.
    var isUploaded: Bool { get }
    /// Whether the content is being uploaded.
    var isUploading: Bool { get }
    /// Why the last upload failed.
    var uploadingError: (any Error)? { get }
    /// Whether the content is local.
    var isDownloaded: Bool { get }
    /// Whether the content is being downloaded.
    var isDownloading: Bool { get }
    /// Why the last download failed.
    var downloadingError: (any Error)? { get }
    /// Whether the local content is the newest version.
    var isMostRecentVersionDownloaded: Bool { get }
    /// Whether the item is shared.
    var isShared: Bool { get }
}

/// Apple's name for an item: anything conforming to ``FileProviderItemProtocol``.
public typealias FileProviderItem = FileProviderItemProtocol

extension FileProviderItemProtocol {
    /// `.data`.
    public var contentType: UTType { .data }
    /// Reading, writing, renaming, moving, trashing, deleting and evicting.
    public var capabilities: FileProviderItemCapabilities { .allowsAll }
    /// Empty versions.
    public var itemVersion: FileProviderItemVersion { FileProviderItemVersion() }
    /// Unknown.
    public var documentSize: NSNumber? { nil }
    /// Unknown.
    public var childItemCount: NSNumber? { nil }
    /// Unknown.
    public var creationDate: Date? { nil }
    /// Unknown.
    public var contentModificationDate: Date? { nil }
    /// Readable and writable.
    public var fileSystemFlags: FileProviderFileSystemFlags { [.userReadable, .userWritable] }
    /// None.
    public var extendedAttributes: [String: Data] { [:] }
    /// None.
    public var symlinkTargetPath: String? { nil }
    /// None.
    public var lastUsedDate: Date? { nil }
    /// None.
    public var tagData: Data? { nil }
    /// None.
    public var favoriteRank: NSNumber? { nil }
    /// False.
    public var isTrashed: Bool { false }
    /// True.
    public var isUploaded: Bool { true }
    /// False.
    public var isUploading: Bool { false }
    /// None.
    public var uploadingError: (any Error)? { nil }
    /// False.
    public var isDownloaded: Bool { false }
    /// False.
    public var isDownloading: Bool { false }
    /// None.
    public var downloadingError: (any Error)? { nil }
    /// True.
    public var isMostRecentVersionDownloaded: Bool { true }
    /// False.
    public var isShared: Bool { false }
}
