public import Foundation

/// A file provider: the storage behind a domain, shaped like Apple's `NSFileProviderReplicatedExtension`
/// with async calls. The system replicates the provider's tree into a local folder lazily: it lists
/// folders with ``enumerateItems(in:startingAt:request:)``, keeps in step through
/// ``enumerateChanges(in:from:request:)`` on the working set, fetches content on first coordinated
/// read, and sends local changes as ``createItem(basedOn:fields:contents:options:request:)``,
/// ``modifyItem(_:baseVersion:changedFields:contents:options:request:)`` and
/// ``deleteItem(identifier:baseVersion:options:request:)``.
///
/// Errors are ``FileProviderError``s with Apple's system reactions, `CocoaError.userCancelled` for a
/// cancelled task, or anything else (retried later).
public protocol FileProvider: Sendable {
    /// The item with `identifier`, or ``FileProviderError/Code/noSuchItem``.
    func item(for identifier: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> any FileProviderItem

    /// One page of the items in `container` (a folder, or `.workingSet` for every item the system
    /// keeps in step), starting at `page`. Pages are at most 500 bytes; an expired page throws
    /// ``FileProviderError/Code/pageExpired``.
    func enumerateItems(
        in container: FileProviderItemIdentifier, startingAt page: FileProviderPage, request: FileProviderRequest
    ) async throws -> FileProviderItemPage

    /// The anchor of `container`'s current state.
    func currentSyncAnchor(for container: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> FileProviderSyncAnchor

    /// What changed in `container` since `anchor`, or ``FileProviderError/Code/syncAnchorExpired``
    /// when the provider no longer knows the anchor.
    func enumerateChanges(
        in container: FileProviderItemIdentifier, from anchor: FileProviderSyncAnchor, request: FileProviderRequest
    ) async throws -> FileProviderChangeBatch

    /// Writes the content of `identifier` (at `version`, or the newest when nil) to a new file in the
    /// request's temporary directory and returns it with the item it belongs to. Reports progress
    /// through `progress`; a cancelled task throws `CocoaError.userCancelled`.
    func fetchContents(
        for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest,
        progress: Progress
    ) async throws -> (contents: URL, item: any FileProviderItem)

    /// Creates an item like `template` (whose identifier is the system's temporary one) with the
    /// content at `contents` for a file. A name already used in the folder throws
    /// ``FileProviderError/Code/filenameCollision`` unless `options` has `.mayAlreadyExist`.
    func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, contents: URL?,
        options: FileProviderCreateItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult

    /// Changes `changedFields` of `item` (the identifier names the provider's item), made against
    /// `baseVersion`. When the content changed on the provider since then, throws
    /// ``FileProviderError/Code/localVersionConflictingWithServer`` and writes nothing.
    func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, contents: URL?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult

    /// Deletes `identifier`, made against `baseVersion`: an unknown item is success, a changed one
    /// throws ``FileProviderError/Code/localVersionConflictingWithServer``, a folder with children needs `.recursive`.
    func deleteItem(
        identifier: FileProviderItemIdentifier, baseVersion: FileProviderItemVersion, options: FileProviderDeleteItemOptions,
        request: FileProviderRequest
    ) async throws
}
