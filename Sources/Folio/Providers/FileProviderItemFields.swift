/// The fields a create or modify call changes (Apple's `NSFileProviderItemFields`, with Apple's bits).
public struct FileProviderItemFields: OptionSet, Hashable, Sendable, Codable {
    /// The bits.
    public var rawValue: UInt
    /// Fields from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The content.
    public static let contents = FileProviderItemFields(rawValue: 1 << 0)
    /// The name.
    public static let filename = FileProviderItemFields(rawValue: 1 << 1)
    /// The parent folder.
    public static let parentItemIdentifier = FileProviderItemFields(rawValue: 1 << 2)
    /// The last-used date.
    public static let lastUsedDate = FileProviderItemFields(rawValue: 1 << 3)
    /// The tags.
    public static let tagData = FileProviderItemFields(rawValue: 1 << 4)
    /// The favorite rank.
    public static let favoriteRank = FileProviderItemFields(rawValue: 1 << 5)
    /// The creation date.
    public static let creationDate = FileProviderItemFields(rawValue: 1 << 6)
    /// The content modification date.
    public static let contentModificationDate = FileProviderItemFields(rawValue: 1 << 7)
    /// The file-system flags (executable, hidden, …).
    public static let fileSystemFlags = FileProviderItemFields(rawValue: 1 << 8)
    /// The extended attributes.
    public static let extendedAttributes = FileProviderItemFields(rawValue: 1 << 9)
    /// The classic Mac type and creator codes (Apple's; no Linux file has them, so no provider
    /// here sees a change of them).
    public static let typeAndCreator = FileProviderItemFields(rawValue: 1 << 10)
}

/// Options of `createItem` (Apple's `NSFileProviderCreateItemOptions`).
public struct FileProviderCreateItemOptions: OptionSet, Hashable, Sendable, Codable {
    /// The bits.
    public var rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The item may already exist on the provider (a re-import): merge rather than collide.
    public static let mayAlreadyExist = FileProviderCreateItemOptions(rawValue: 1 << 0)
    /// The item was deleted on the provider while it was edited here: the edit re-creates it.
    public static let deletionConflicted = FileProviderCreateItemOptions(rawValue: 1 << 1)
}

/// Options of `modifyItem` (Apple's `NSFileProviderModifyItemOptions`).
public struct FileProviderModifyItemOptions: OptionSet, Hashable, Sendable, Codable {
    /// The bits.
    public var rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The change may already be on the provider (a re-import).
    public static let mayAlreadyExist = FileProviderModifyItemOptions(rawValue: 1 << 0)
    /// Fail with ``FileProviderError/Code/localVersionConflictingWithServer`` when the base
    /// version is not the provider's current one. Folio's providers always check (the option is
    /// accepted and changes nothing); Apple's check only when the system passes it.
    public static let failOnConflict = FileProviderModifyItemOptions(rawValue: 1 << 1)
}

/// Options of `deleteItem` (Apple's `NSFileProviderDeleteItemOptions`).
public struct FileProviderDeleteItemOptions: OptionSet, Hashable, Sendable, Codable {
    /// The bits.
    public var rawValue: UInt
    /// Options from their bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Delete a folder with its contents; without it, a folder with children is refused with
    /// ``FileProviderError/Code/directoryNotEmpty``.
    public static let recursive = FileProviderDeleteItemOptions(rawValue: 1 << 0)
}
