import Crypto
public import Folio
public import Foundation

/// A file provider that keeps its tree in memory, for tests of the provider model, the validation
/// suite and the sync engine: error injection per call, optional case-insensitive names, duplicate
/// names allowed (a server with "titles", not names), anchor expiry on demand, and a log of calls.
public actor InMemoryFileProvider: FileProvider {
    /// The provider calls, for error injection and the call log.
    public enum Operation: String, Sendable, CaseIterable {
        case item, enumerateItems, currentSyncAnchor, enumerateChanges, fetchContents, createItem, modifyItem, deleteItem
    }

    private struct Node {
        var record: FileProviderItemRecord
        var content: Data?
        var metadataGeneration: UInt64 = 0
    }

    private var nodes: [FileProviderItemIdentifier: Node] = [:]
    private var changes = ProviderChangeLog()
    /// Per operation, what its next calls do: throw the error, or succeed (nil).
    private var failures: [Operation: [(any Error)?]] = [:]
    private var nextIdentifier = 0
    /// Every call made, in order.
    public private(set) var calls: [Operation] = []
    /// Items per page.
    public var pageSize: Int
    /// Whether names differing only in case collide.
    public let caseInsensitive: Bool
    /// Whether two items of one folder may have the same name (as on services with titles).
    public let allowsDuplicateNames: Bool

    /// An empty provider (just the root).
    public init(pageSize: Int = 100, caseInsensitive: Bool = false, allowsDuplicateNames: Bool = false) {
        self.pageSize = pageSize
        self.caseInsensitive = caseInsensitive
        self.allowsDuplicateNames = allowsDuplicateNames
        nodes[.rootContainer] = Node(
            record: FileProviderItemRecord(
                itemIdentifier: .rootContainer, parentItemIdentifier: .rootContainer, filename: "", contentType: .folder,
                itemVersion: FileProviderItemVersion(contentVersion: Data(), metadataVersion: Data([0]))))
    }

    /// Makes the next `times` calls of `operation` throw `error`, after `succeeding` calls that succeed.
    public func failNext(_ operation: Operation, with error: any Error, times: Int = 1, afterSucceeding succeeding: Int = 0) {
        failures[operation, default: []].append(contentsOf: repeatElement(nil, count: succeeding))
        failures[operation, default: []].append(contentsOf: repeatElement(Optional(error), count: times))
    }

    /// Makes every anchor handed out so far expired.
    public func expireAnchors() { changes.expireAnchors() }

    /// Sets the number of items per page.
    public func setPageSize(_ size: Int) { pageSize = size }

    /// The content of `identifier`, as the "server" has it.
    public func content(of identifier: FileProviderItemIdentifier) -> Data? { nodes[identifier]?.content }

    /// Every item but the root.
    public func allItems() -> [FileProviderItemRecord] { nodes.values.map(\.record).filter { $0.itemIdentifier != .rootContainer } }

    /// Changes the content of a file behind the system's back, as another device would.
    public func replaceContent(of identifier: FileProviderItemIdentifier, with data: Data) throws {
        guard var node = nodes[identifier], !node.record.isFolder else { throw FileProviderError.noSuchItem(identifier) }
        setContent(&node, data)
        nodes[identifier] = node
        changes.recordUpdate(identifier)
    }

    /// Deletes an item (and its children) behind the system's back, as another device would.
    public func removeBehindTheSystemsBack(_ identifier: FileProviderItemIdentifier) {
        removeTree(identifier)
    }

    // MARK: FileProvider

    public func item(for identifier: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> any FileProviderItem {
        try begin(.item)
        return try node(identifier).record
    }

    public func enumerateItems(
        in container: FileProviderItemIdentifier, startingAt page: FileProviderPage, request: FileProviderRequest
    ) async throws -> FileProviderItemPage {
        try begin(.enumerateItems)
        if container == .workingSet {
            let all = ProviderPaging.sorted(allItems(), key: \.itemIdentifier.rawValue)
            let (items, next) = try ProviderPaging.slice(all, key: \.itemIdentifier.rawValue, after: page, limit: pageSize)
            return FileProviderItemPage(items: Array(items), nextPage: next)
        }
        guard try node(container).record.isFolder else { throw FileProviderError(.noSuchItem, message: "\(container) is not a folder") }
        // Duplicate names are ordered by identifier too, so a page never splits them ambiguously.
        let key: (FileProviderItemRecord) -> String = { $0.filename + "\u{0}" + $0.itemIdentifier.rawValue }
        let children = ProviderPaging.sorted(children(of: container), key: key)
        let (items, next) = try ProviderPaging.slice(children, key: key, after: page, limit: pageSize)
        return FileProviderItemPage(items: Array(items), nextPage: next)
    }

    public func currentSyncAnchor(for container: FileProviderItemIdentifier, request: FileProviderRequest) async throws
        -> FileProviderSyncAnchor
    {
        try begin(.currentSyncAnchor)
        return changes.anchor
    }

    public func enumerateChanges(
        in container: FileProviderItemIdentifier, from anchor: FileProviderSyncAnchor, request: FileProviderRequest
    ) async throws -> FileProviderChangeBatch {
        try begin(.enumerateChanges)
        let found = try changes.changes(since: anchor, limit: pageSize)
        let updated = found.updated.compactMap { nodes[$0]?.record }.filter {
            container == .workingSet || $0.parentItemIdentifier == container
        }
        return FileProviderChangeBatch(
            updatedItems: updated, deletedItemIdentifiers: found.deleted, anchor: found.anchor, moreComing: found.moreComing)
    }

    public func fetchContents(
        for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest, progress: Progress
    ) async throws -> (contents: URL, item: any FileProviderItem) {
        try begin(.fetchContents)
        try Task.checkCancellation()
        let node = try node(identifier)
        guard let content = node.content else { throw FileProviderError(.noSuchItem, message: "\(identifier) is a folder") }
        if let version, version.contentVersion != node.record.itemVersion.contentVersion {
            throw FileProviderError(.versionNoLongerAvailable)
        }
        progress.totalUnitCount = Int64(content.count)
        let url = request.temporaryDirectory.appendingPathComponent("fetch-\(UUID().uuidString)")
        try content.write(to: url)
        progress.completedUnitCount = Int64(content.count)
        return (url, node.record)
    }

    public func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, contents: URL?, options: FileProviderCreateItemOptions,
        request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        try begin(.createItem)
        try FileProviderFilename.validate(template.filename)
        let parent = template.parentItemIdentifier
        guard try node(parent).record.isFolder else { throw FileProviderError(.noSuchItem, message: "the parent is not a folder") }
        if let existing = sibling(named: template.filename, in: parent) {
            if options.contains(.mayAlreadyExist), existing.record.isFolder == template.contentType.isFolder {
                return FileProviderItemResult(item: existing.record)
            }
            throw FileProviderError.collision(with: existing.record.itemIdentifier)
        }
        nextIdentifier += 1
        let identifier = FileProviderItemIdentifier("mem-\(nextIdentifier)")
        var record = FileProviderItemRecord(template)
        record.itemIdentifier = identifier
        var node = Node(record: record)
        if template.contentType.isFolder {
            node.record.childCount = 0
        } else if template.contentType == .symbolicLink {
            node.content = Data()
        } else {
            setContent(&node, try contents.map { try Data(contentsOf: $0) } ?? Data())
        }
        bumpMetadata(&node)
        nodes[identifier] = node
        changes.recordUpdate(identifier)
        return FileProviderItemResult(item: node.record)
    }

    public func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, contents: URL?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        try begin(.modifyItem)
        let identifier = item.itemIdentifier
        var node = try node(identifier)
        if changedFields.contains(.contents), !node.record.isFolder,
            baseVersion.contentVersion != FileProviderItemVersion.beforeFirstSyncComponent,
            baseVersion.contentVersion != node.record.itemVersion.contentVersion, !options.contains(.mayAlreadyExist)
        {
            throw FileProviderError(.localVersionConflictingWithServer, message: "\(node.record.filename) changed since the base version")
        }
        if changedFields.contains(.filename) || changedFields.contains(.parentItemIdentifier) {
            let name = changedFields.contains(.filename) ? item.filename : node.record.filename
            let parent = changedFields.contains(.parentItemIdentifier) ? item.parentItemIdentifier : node.record.parentItemIdentifier
            try FileProviderFilename.validate(name)
            guard try self.node(parent).record.isFolder else { throw FileProviderError(.noSuchItem, message: "the parent is not a folder") }
            if isAncestor(identifier, of: parent) {
                throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSLocalizedDescriptionKey: "a folder cannot move into itself"])
            }
            if let existing = sibling(named: name, in: parent), existing.record.itemIdentifier != identifier {
                throw FileProviderError.collision(with: existing.record.itemIdentifier)
            }
            node.record.filename = name
            node.record.parentItemIdentifier = parent
        }
        if changedFields.contains(.contents), !node.record.isFolder {
            setContent(&node, try contents.map { try Data(contentsOf: $0) } ?? Data())
        }
        if changedFields.contains(.contentModificationDate) { node.record.contentModificationDate = item.contentModificationDate }
        if changedFields.contains(.creationDate) { node.record.creationDate = item.creationDate }
        if changedFields.contains(.fileSystemFlags) { node.record.fileSystemFlags = item.fileSystemFlags }
        if changedFields.contains(.extendedAttributes) { node.record.extendedAttributes = item.extendedAttributes }
        bumpMetadata(&node)
        nodes[identifier] = node
        changes.recordUpdate(identifier)
        return FileProviderItemResult(item: node.record)
    }

    public func deleteItem(
        identifier: FileProviderItemIdentifier, baseVersion: FileProviderItemVersion, options: FileProviderDeleteItemOptions,
        request: FileProviderRequest
    ) async throws {
        try begin(.deleteItem)
        guard let node = nodes[identifier] else { return }
        guard identifier != .rootContainer else { throw FileProviderError(.deletionRejected, message: "the root cannot be deleted") }
        if !node.record.isFolder, baseVersion.contentVersion != FileProviderItemVersion.beforeFirstSyncComponent,
            baseVersion.contentVersion != node.record.itemVersion.contentVersion
        {
            throw FileProviderError(.localVersionConflictingWithServer, message: "\(node.record.filename) changed since the base version")
        }
        if node.record.isFolder, !options.contains(.recursive), !children(of: identifier).isEmpty {
            throw FileProviderError(.directoryNotEmpty)
        }
        removeTree(identifier)
    }

    // MARK: Helpers

    private func begin(_ operation: Operation) throws {
        calls.append(operation)
        if var queued = failures[operation], !queued.isEmpty {
            let next = queued.removeFirst()
            failures[operation] = queued
            if let next { throw next }
        }
    }

    private func node(_ identifier: FileProviderItemIdentifier) throws -> Node {
        guard let node = nodes[identifier] else { throw FileProviderError.noSuchItem(identifier) }
        return node
    }

    private func children(of folder: FileProviderItemIdentifier) -> [FileProviderItemRecord] {
        nodes.values.map(\.record).filter { $0.parentItemIdentifier == folder && $0.itemIdentifier != .rootContainer }
    }

    private func sibling(named name: String, in folder: FileProviderItemIdentifier) -> Node? {
        guard !allowsDuplicateNames else { return nil }
        // Names compare byte for byte, as on Linux file systems (Swift's `==` would merge NFC and NFD).
        let wanted = caseInsensitive ? name.lowercased() : name
        return nodes.values.first {
            $0.record.parentItemIdentifier == folder && $0.record.itemIdentifier != .rootContainer
                && (caseInsensitive ? $0.record.filename.lowercased() : $0.record.filename).utf8.elementsEqual(wanted.utf8)
        }
    }

    private func isAncestor(_ ancestor: FileProviderItemIdentifier, of item: FileProviderItemIdentifier) -> Bool {
        var current = item
        while current != .rootContainer {
            if current == ancestor { return true }
            guard let parent = nodes[current]?.record.parentItemIdentifier else { return false }
            current = parent
        }
        return false
    }

    private func removeTree(_ identifier: FileProviderItemIdentifier) {
        for child in children(of: identifier) { removeTree(child.itemIdentifier) }
        if nodes.removeValue(forKey: identifier) != nil { changes.recordDeletion(identifier) }
    }

    private func setContent(_ node: inout Node, _ data: Data) {
        node.content = data
        node.record.size = Int64(data.count)
        node.record.itemVersion.contentVersion = Data(SHA256.hash(data: data))
        node.record.contentModificationDate = Date()
    }

    private func bumpMetadata(_ node: inout Node) {
        node.metadataGeneration += 1
        withUnsafeBytes(of: node.metadataGeneration.bigEndian) { node.record.itemVersion.metadataVersion = Data($0) }
    }
}
