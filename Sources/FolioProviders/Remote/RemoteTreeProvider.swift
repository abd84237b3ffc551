import Folio
import Foundation
import UniformTypes

/// What the providers over servers without a change history (WebDAV, S3) share: paged listings of a
/// folder or the working set, and changes found by comparing whole listings (``ListingSnapshot``).
/// Each provider supplies its listings; the public `FileProvider` calls forward to these.
protocol RemoteTreeProvider: Actor {
    /// The last whole listing and the changes found so far.
    var listing: ListingSnapshot { get set }
    /// Items per page.
    var pageSize: Int { get }
    /// The paths being written by a call of this provider.
    var busy: Set<String> { get set }
    /// The calls waiting to write each busy path.
    var waiters: [String: [CheckedContinuation<Void, Never>]] { get set }
    /// Every item below the root.
    func walk() async throws -> ListingWalk
    /// The items directly in `container` (not the working set); noSuchItem when it is not a folder.
    func listChildren(of container: FileProviderItemIdentifier) async throws -> [FileProviderItemRecord]
}

extension RemoteTreeProvider {
    /// The path an identifier stands for ("" for the root): these providers' identifiers are paths.
    static func relative(_ identifier: FileProviderItemIdentifier) -> String {
        identifier == .rootContainer ? "" : identifier.rawValue
    }

    /// The identifier of the item at `relative`.
    static func identifier(_ relative: String) -> FileProviderItemIdentifier {
        relative.isEmpty ? .rootContainer : FileProviderItemIdentifier(relative)
    }

    /// The last name of the path `relative`.
    static func name(of relative: String) -> String {
        guard let (folder, name) = simplySplit(relative) else { return relative.split(separator: "/").last.map(String.init) ?? "" }
        return folder == nil ? relative : String(relative[name...])
    }

    /// The path of the folder holding `relative` ("" for the root).
    static func folder(of relative: String) -> String {
        guard let (folder, _) = simplySplit(relative) else { return relative.split(separator: "/").dropLast().joined(separator: "/") }
        return folder.map { String(relative[..<$0]) } ?? ""
    }

    /// Where the last slash of `relative` is and where its last name starts (no slash: nil and the
    /// start), read as bytes for the paths every listing names; nil for a path with an empty
    /// segment, which the callers split the slow way.
    private static func simplySplit(_ relative: String) -> (folder: String.Index?, name: String.Index)? {
        let bytes = relative.utf8
        guard let last = bytes.last, last != UInt8(ascii: "/"), bytes.first != UInt8(ascii: "/") else { return bytes.isEmpty ? (nil, bytes.startIndex) : nil }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return (nil, bytes.startIndex) }
        var previous = UInt8(0)
        for byte in bytes[..<slash] {
            if byte == UInt8(ascii: "/"), previous == byte { return nil }
            previous = byte
        }
        guard previous != UInt8(ascii: "/") else { return nil }
        return (slash, bytes.index(after: slash))
    }


    /// Lists everything and records what changed since the last listing.
    func refresh() async throws {
        listing.update(with: try await walk())
    }

    /// Records a change this provider made, so the next listing does not report it twice.
    func remember(_ item: FileProviderItemRecord?, removed: [FileProviderItemIdentifier] = []) {
        listing.remember(item, removed: removed)
    }

    /// A page of `container` (or of the working set, listed whole on its first page).
    func page(of container: FileProviderItemIdentifier, startingAt page: FileProviderPage) async throws -> FileProviderItemPage {
        _ = try ProviderPaging.key(of: page)
        if container == .workingSet {
            if page.isInitial || listing.items == nil { try await refresh() }
            let items = listing.sortedByIdentifier()
            let (slice, next) = try ProviderPaging.slice(items, key: \.itemIdentifier.rawValue, after: page, limit: pageSize)
            return FileProviderItemPage(items: Array(slice), nextPage: next)
        }
        let items = ProviderPaging.sorted(try await listChildren(of: container), key: \.filename)
        let (slice, next) = try ProviderPaging.slice(items, key: \.filename, after: page, limit: pageSize)
        return FileProviderItemPage(items: Array(slice), nextPage: next)
    }

    /// The working set whole, listed now (``WorkingSetFileProvider``): the items the pages of
    /// ``page(of:startingAt:)`` hand out in order.
    package func workingSetItems(request: FileProviderRequest) async throws -> [FileProviderItemIdentifier: FileProviderItemRecord] {
        try await refresh()
        return listing.items ?? [:]
    }

    /// The anchor of the server's current state (listed now).
    func anchorNow() async throws -> FileProviderSyncAnchor {
        try await refresh()
        return listing.changes.anchor
    }

    /// The changes in `container` (or anywhere, for the working set) since `anchor`.
    func changes(in container: FileProviderItemIdentifier, since anchor: FileProviderSyncAnchor) async throws -> FileProviderChangeBatch {
        guard listing.changes.generation(of: anchor) != nil else {
            throw FileProviderError(.syncAnchorExpired, message: "the sync anchor is expired or not this provider's")
        }
        try await refresh()
        let found = try listing.changes.changes(since: anchor, limit: pageSize)
        let updated = found.updated.compactMap { listing.items?[$0] }.filter { container == .workingSet || $0.parentItemIdentifier == container }
        return FileProviderChangeBatch(updatedItems: updated, deletedItemIdentifiers: found.deleted, anchor: found.anchor, moreComing: found.moreComing)
    }

    /// Waits until no other call of this provider writes `relative`, then claims it: two writes to
    /// one path from one device never race each other on the server.
    func lock(_ relative: String) async {
        while busy.contains(relative) {
            await withCheckedContinuation { waiters[relative, default: []].append($0) }
        }
        busy.insert(relative)
    }

    /// Releases `relative` for the next writer.
    func unlock(_ relative: String) {
        busy.remove(relative)
        if var queue = waiters[relative], !queue.isEmpty {
            let next = queue.removeFirst()
            waiters[relative] = queue.isEmpty ? nil : queue
            next.resume()
        }
    }
}
