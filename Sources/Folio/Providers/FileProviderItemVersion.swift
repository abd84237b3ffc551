public import Foundation

/// An item's version (Apple's `NSFileProviderItemVersion`): a content version and a metadata version,
/// each at most 128 bytes, opaque to the system. A new content version means the content changed: the
/// system downloads it again when the item is materialized. The metadata version is stored and handed
/// back as the base version of the next change.
public struct FileProviderItemVersion: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The content version (at most ``maximumLength`` bytes).
    public var contentVersion: Data
    /// The metadata version (at most ``maximumLength`` bytes).
    public var metadataVersion: Data

    /// A version made of its two parts.
    public init(contentVersion: Data, metadataVersion: Data) {
        self.contentVersion = contentVersion
        self.metadataVersion = metadataVersion
    }

    /// The version of an item the provider has not seen yet (Apple's empty components).
    public init() {
        self.init(contentVersion: Self.beforeFirstSyncComponent, metadataVersion: Self.beforeFirstSyncComponent)
    }

    /// The component of a version for an item that was never synced.
    public static let beforeFirstSyncComponent = Data()

    /// The longest version component, in bytes.
    public static let maximumLength = 128

    /// Whether both components fit the limit.
    package var isWellFormed: Bool {
        contentVersion.count <= Self.maximumLength && metadataVersion.count <= Self.maximumLength
    }

    /// Both components in hexadecimal.
    public var description: String {
        "content \(contentVersion.hexadecimal) metadata \(metadataVersion.hexadecimal)"
    }
}
