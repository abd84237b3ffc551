import Folio
import Foundation
import Logging

/// The server's side of a domain, listed whole through the provider's working set and laid out by
/// path. The listing is all or nothing: a page that fails fails the listing, so absence is never
/// inferred from part of one.
struct RemoteTree: Sendable {
    /// The server folder of Folio's own files (the drive's marker, its conflict area).
    static let metaFolder = ".folio"
    /// The drive's marker: its epoch and generation tell a restored or replaced server.
    static let markerPath = ".folio/drive.json"
    /// The conflict versions every device shares (``SharedConflicts``).
    static let conflictsPath = ".folio/conflicts"
    private static let metaFolderPath = SyncPath(metaFolder)

    /// The synced items by path.
    var entries: [SyncPath: RemoteEntry] = [:]
    /// The items by path, as the provider described them.
    var records: [SyncPath: FileProviderItemRecord] = [:]
    /// The meta folder and the marker, when the server has them.
    var meta: FileProviderItemRecord?
    var marker: FileProviderItemRecord?
    /// The shared conflict area (`.folio/conflicts`) and what is in it, by name.
    var conflictFolder: FileProviderItemRecord?
    var conflicts: [String: FileProviderItemRecord] = [:]
    /// Items left out (a name no file system here can hold, a second item with one name, an orphan).
    var skipped: [String] = []

    /// Lists everything the provider has.
    static func list(_ provider: any FileProvider, request: FileProviderRequest, logger: Logger) async throws -> RemoteTree {
        // The items as they came, and whether they came in the order they are taken in below
        // (the identifiers' bytes, each once): the remote-tree providers page the working set so,
        // and a listing of every item need not be sorted again then.
        var listed: [FileProviderItemRecord] = []
        var inOrder = true
        if let whole = provider as? any WorkingSetFileProvider {
            // Sorted and each identifier once, as the protocol promises.
            listed = try await whole.workingSetItems(request: request)
        } else {
            var page = FileProviderPage.initialPageSortedByName
            for _ in 0..<1_000_000 {
                let result = try await provider.enumerateItems(in: .workingSet, startingAt: page, request: request)
                for item in result.items {
                    let record = FileProviderItemRecord(item)
                    if let last = listed.last, !ByteOrder.precedes(last.itemIdentifier.rawValue, record.itemIdentifier.rawValue) { inOrder = false }
                    listed.append(record)
                }
                guard let next = result.nextPage else { break }
                page = next
            }
        }
        // The items by identifier (the last of each), made when first needed: to put a listing
        // in order, or to find a folder not yet seen.
        var byIdentifier: [FileProviderItemIdentifier: FileProviderItemRecord]?
        func items() -> [FileProviderItemIdentifier: FileProviderItemRecord] {
            if let byIdentifier { return byIdentifier }
            let made = Dictionary(listed.map { ($0.itemIdentifier, $0) }, uniquingKeysWith: { _, last in last })
            byIdentifier = made
            return made
        }
        if !inOrder {
            let items = items()
            listed = items.keys.sorted(by: { ByteOrder.precedes($0.rawValue, $1.rawValue) }).map { items[$0]! }
        }
        var tree = RemoteTree()
        tree.records.reserveCapacity(listed.count)
        tree.entries.reserveCapacity(listed.count)
        var paths: [FileProviderItemIdentifier: SyncPath?] = [.rootContainer: nil]
        /// The path of `item` (.none: it has none here: a name this system cannot hold, an orphan).
        /// Its folder's is looked up (kept as made: most listings name a folder before what it
        /// holds), else made.
        func path(of item: FileProviderItemRecord, depth: Int = 0) -> SyncPath?? {
            guard depth < 256, isLocalName(item.filename) else { return .none }
            let parent: SyncPath?
            if let known = paths[item.parentItemIdentifier] {
                parent = known
            } else if let folder = items()[item.parentItemIdentifier], case .some(let made) = path(of: folder, depth: depth + 1) {
                parent = made
            } else {
                return .none
            }
            let result = parent.map { $0.appending(item.filename) } ?? SyncPath(item.filename)
            if item.isFolder { paths[item.itemIdentifier] = result }
            return .some(result)
        }
        for item in listed {
            let identifier = item.itemIdentifier
            guard identifier != .rootContainer, case .some(.some(let path)) = path(of: item) else {
                tree.skipped.append(item.filename)
                continue
            }
            if path.isWithin(metaFolderPath) {
                if path.text == metaFolder { tree.meta = item }
                if path.text == markerPath { tree.marker = item }
                if path.text == conflictsPath { tree.conflictFolder = item }
                if path.parent?.text == conflictsPath, !item.isFolder { tree.conflicts[item.filename] = item }
                continue
            }
            // Names Folio keeps for itself here (a placeholder's suffix anywhere, its marker and
            // staging at the top) are not synced: reported, like names this system cannot hold.
            if PlaceholderStub.isStubName(item.filename) || (!path.bytes.contains(UInt8(ascii: "/")) && LocalReplica.isPrivate(path.text)) {
                tree.skipped.append(path.text)
                continue
            }
            if let first = tree.records.updateValue(item, forKey: path) {
                tree.records[path] = first
                tree.skipped.append(path.text)
                logger.warning("a second item with one name was left out", metadata: ["path": "\(path)", "identifier": "\(identifier)"])
                continue
            }
            tree.entries[path] = RemoteEntry(identifier: identifier.rawValue, isFolder: item.isFolder, version: item.itemVersion.contentVersion, size: item.size)
        }
        return tree
    }

    /// Whether `name` can name a file here.
    static func isLocalName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(0) && !name.utf8.contains(UInt8(ascii: "/")) && name.utf8.count <= 255
    }

    /// The identifier of the folder at `path` (the root for nil), if the server has it.
    func folderIdentifier(_ path: SyncPath?) -> FileProviderItemIdentifier? {
        guard let path else { return .rootContainer }
        guard let record = records[path], record.isFolder else { return nil }
        return record.itemIdentifier
    }
}

/// The drive marker's content.
struct DriveMarker: Codable, Equatable, Sendable {
    var format = 1
    var epoch: String
    var generation: Int64
}
