/// One page of a folder's items (what Apple's enumeration observer receives before `finishEnumerating(upTo:)`).
public struct FileProviderItemPage: Sendable {
    /// The page's items.
    public var items: [any FileProviderItem]
    /// The page to ask for next, or nil at the end.
    public var nextPage: FileProviderPage?

    /// A page of items.
    public init(items: [any FileProviderItem], nextPage: FileProviderPage?) {
        self.items = items
        self.nextPage = nextPage
    }
}

/// Changes since an anchor (what Apple's change observer receives: `didUpdate`,
/// `didDeleteItems(withIdentifiers:)` and `finishEnumeratingChanges(upTo:moreComing:)`).
public struct FileProviderChangeBatch: Sendable {
    /// Items created or changed.
    public var updatedItems: [any FileProviderItem]
    /// Items deleted (unknown identifiers are ignored).
    public var deletedItemIdentifiers: [FileProviderItemIdentifier]
    /// The anchor to ask from next. It differs from the one asked from unless nothing changed.
    public var anchor: FileProviderSyncAnchor
    /// Whether more changes wait: ask again at once from ``anchor``.
    public var moreComing: Bool

    /// A batch of changes.
    public init(
        updatedItems: [any FileProviderItem], deletedItemIdentifiers: [FileProviderItemIdentifier], anchor: FileProviderSyncAnchor,
        moreComing: Bool
    ) {
        self.updatedItems = updatedItems
        self.deletedItemIdentifiers = deletedItemIdentifiers
        self.anchor = anchor
        self.moreComing = moreComing
    }
}

/// What `createItem` and `modifyItem` give back (Apple's completion tuple).
public struct FileProviderItemResult: Sendable {
    /// The item as the provider now has it; nil means the provider refused it, or (from modify) that
    /// the item is gone, and the system deletes it locally.
    public var item: (any FileProviderItem)?
    /// Fields the provider has not stored yet; the system sends them again later.
    public var stillPendingFields: FileProviderItemFields
    /// Whether the system must fetch the content again (the provider changed it while storing it).
    public var shouldFetchContent: Bool

    /// A result.
    public init(item: (any FileProviderItem)?, stillPendingFields: FileProviderItemFields = [], shouldFetchContent: Bool = false) {
        self.item = item
        self.stillPendingFields = stillPendingFields
        self.shouldFetchContent = shouldFetchContent
    }
}
