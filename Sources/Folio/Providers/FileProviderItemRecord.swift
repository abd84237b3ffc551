public import Foundation
public import UniformTypes

/// An item's shared properties as plain values: what the system stores, compares and sends over the
/// provider protocol. Any ``FileProviderItem`` can be copied into one, and a provider may use it as
/// its own item type.
public struct FileProviderItemRecord: FileProviderItemProtocol, Hashable, Codable {
    /// The item's identifier, chosen by the provider.
    public var itemIdentifier: FileProviderItemIdentifier
    /// The folder the item is in.
    public var parentItemIdentifier: FileProviderItemIdentifier
    /// The item's name in its folder.
    public var filename: String
    /// The item's type.
    public var contentType: UTType
    /// What the user may do with the item.
    public var capabilities: FileProviderItemCapabilities
    /// The item's content and metadata versions.
    public var itemVersion: FileProviderItemVersion
    /// The content's size in bytes, when known.
    public var size: Int64?
    /// How many children a folder has, when known.
    public var childCount: Int?
    /// When the item was created.
    public var creationDate: Date?
    /// When the content last changed.
    public var contentModificationDate: Date?
    /// Executable, readable, writable, hidden.
    public var fileSystemFlags: FileProviderFileSystemFlags
    /// Extended attributes synced with the item.
    public var extendedAttributes: [String: Data]
    /// A symbolic link's target.
    public var symlinkTargetPath: String?

    /// A record with the given properties.
    public init(
        itemIdentifier: FileProviderItemIdentifier, parentItemIdentifier: FileProviderItemIdentifier, filename: String,
        contentType: UTType = .data, capabilities: FileProviderItemCapabilities = .allowsAll,
        itemVersion: FileProviderItemVersion = FileProviderItemVersion(), size: Int64? = nil, childCount: Int? = nil,
        creationDate: Date? = nil, contentModificationDate: Date? = nil,
        fileSystemFlags: FileProviderFileSystemFlags = [.userReadable, .userWritable], extendedAttributes: [String: Data] = [:],
        symlinkTargetPath: String? = nil
    ) {
        self.itemIdentifier = itemIdentifier
        self.parentItemIdentifier = parentItemIdentifier
        self.filename = filename
        self.contentType = contentType
        self.capabilities = capabilities
        self.itemVersion = itemVersion
        self.size = size
        self.childCount = childCount
        self.creationDate = creationDate
        self.contentModificationDate = contentModificationDate
        self.fileSystemFlags = fileSystemFlags
        self.extendedAttributes = extendedAttributes
        self.symlinkTargetPath = symlinkTargetPath
    }

    /// A copy of `item`'s shared properties.
    public init(_ item: any FileProviderItem) {
        if let record = item as? FileProviderItemRecord {
            self = record
            return
        }
        self.init(
            itemIdentifier: item.itemIdentifier, parentItemIdentifier: item.parentItemIdentifier, filename: item.filename,
            contentType: item.contentType, capabilities: item.capabilities, itemVersion: item.itemVersion,
            size: item.documentSize?.int64Value, childCount: item.childItemCount?.intValue, creationDate: item.creationDate,
            contentModificationDate: item.contentModificationDate, fileSystemFlags: item.fileSystemFlags,
            extendedAttributes: item.extendedAttributes, symlinkTargetPath: item.symlinkTargetPath)
    }

    /// ``size`` as a number.
    public var documentSize: NSNumber? { size.map { NSNumber(value: $0) } }
    /// ``childCount`` as a number.
    public var childItemCount: NSNumber? { childCount.map { NSNumber(value: $0) } }

    /// Whether the item is a folder.
    public var isFolder: Bool { contentType.isFolder }
}
