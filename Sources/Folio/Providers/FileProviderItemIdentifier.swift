import Foundation

/// An item's identifier within a provider domain (Apple's `NSFileProviderItemIdentifier`): chosen by the
/// provider, stable across renames and moves, and opaque to the system.
public struct FileProviderItemIdentifier: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The identifier's text.
    public var rawValue: String

    /// Wraps `rawValue` as an identifier.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps `rawValue` as an identifier.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The domain's root folder.
    public static let rootContainer = FileProviderItemIdentifier("NSFileProviderRootContainerItemIdentifier")
    /// The working set: every item the system keeps in step, enumerated for changes.
    public static let workingSet = FileProviderItemIdentifier("NSFileProviderWorkingSetContainerItemIdentifier")
    /// The trash.
    public static let trashContainer = FileProviderItemIdentifier("NSFileProviderTrashContainerItemIdentifier")

    /// The identifier's text.
    public var description: String { rawValue }

    /// The longest identifier the system stores, in UTF-8 bytes.
    package static let maximumLength = 1024

    /// Whether the identifier can be stored and sent: not empty, at most ``maximumLength`` bytes, no NUL.
    package var isWellFormed: Bool {
        !rawValue.isEmpty && rawValue.utf8.count <= Self.maximumLength && !rawValue.utf8.contains(0)
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Identifiers are equal when their bytes are (as NSString compares, code unit by code unit):
    /// Swift's `String` equality would make the NFC and NFD spellings of a name — two files on a
    /// Linux server — one item.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8) }

    public func hash(into hasher: inout Hasher) {
        for byte in rawValue.utf8 { hasher.combine(byte) }
        hasher.combine(rawValue.utf8.count)
    }
}

/// A domain's identifier (Apple's `NSFileProviderDomainIdentifier`).
public struct FileProviderDomainIdentifier: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The identifier's text.
    public var rawValue: String

    /// Wraps `rawValue` as a domain identifier.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps `rawValue` as a domain identifier (Apple's unlabelled form).
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The identifier's text.
    public var description: String { rawValue }
}
