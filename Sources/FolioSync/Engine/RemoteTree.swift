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
    ///
    /// The tree does not depend on the order items are listed in: folders are laid out first, in
    /// the order of their identifiers' bytes (a provider whose identifiers are paths lists a
    /// folder's folder first then), and then the files, as they come. Of two items with one path,
    /// the one first in identifier order keeps it; of two for one of Folio's own (the meta folder,
    /// the marker, the conflict area and each conflict in it), the last.
    static func list(_ provider: any FileProvider, request: FileProviderRequest, logger: Logger) async throws -> RemoteTree {
        // The items by identifier (each once), when a provider hands its working set over whole or a
        // paged listing is out of order (an identifier repeated: the last of each stands); else the
        // pages as they came, in order and each identifier once, and this made only when needed.
        var byIdentifier: [FileProviderItemIdentifier: FileProviderItemRecord]?
        var listed: [FileProviderItemRecord] = []
        func items() -> [FileProviderItemIdentifier: FileProviderItemRecord] {
            if let byIdentifier { return byIdentifier }
            let made = Dictionary(listed.map { ($0.itemIdentifier, $0) }, uniquingKeysWith: { _, last in last })
            byIdentifier = made
            return made
        }
        if let whole = provider as? any WorkingSetFileProvider {
            byIdentifier = try await whole.workingSetItems(request: request)
        } else {
            var inOrder = true
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
            if !inOrder {
                _ = items()
                listed = []
            }
        }
        // Folders in identifier order: `listed` is, the items by identifier are in none.
        var folders: [FileProviderItemRecord] = []
        if let byIdentifier {
            for item in byIdentifier.values where item.isFolder { folders.append(item) }
            folders = ProviderPaging.sorted(folders, key: \.itemIdentifier.rawValue)
        } else {
            folders = listed.filter(\.isFolder)
        }

        var tree = RemoteTree()
        let count = byIdentifier?.count ?? listed.count
        tree.records.reserveCapacity(count)
        tree.entries.reserveCapacity(count)
        var paths: [FileProviderItemIdentifier: SyncPath?] = [.rootContainer: nil]
        /// The path of `item` (.none: it has none here: a name this system cannot hold, an orphan).
        /// Its folder's is looked up (kept as made: folders are laid out first), else made.
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
        /// Whether `item` comes after `held` in identifier order (or nothing is held).
        func comesAfter(_ held: FileProviderItemRecord?, _ item: FileProviderItemRecord) -> Bool {
            held.map { ByteOrder.precedes($0.itemIdentifier.rawValue, item.itemIdentifier.rawValue) } ?? true
        }
        func take(_ item: FileProviderItemRecord) {
            let identifier = item.itemIdentifier
            guard identifier != .rootContainer, case .some(.some(let path)) = path(of: item) else {
                tree.skipped.append(item.filename)
                return
            }
            if path.isWithin(metaFolderPath) {
                if path.text == metaFolder, comesAfter(tree.meta, item) { tree.meta = item }
                if path.text == markerPath, comesAfter(tree.marker, item) { tree.marker = item }
                if path.text == conflictsPath, comesAfter(tree.conflictFolder, item) { tree.conflictFolder = item }
                if path.parent?.text == conflictsPath, !item.isFolder, comesAfter(tree.conflicts[item.filename], item) { tree.conflicts[item.filename] = item }
                return
            }
            // Names Folio keeps for itself here (a placeholder's suffix anywhere, its marker and
            // staging at the top) are not synced: reported, like names this system cannot hold.
            if PlaceholderStub.isStubName(item.filename) || (!path.bytes.contains(UInt8(ascii: "/")) && LocalReplica.isPrivate(path.text)) {
                tree.skipped.append(path.text)
                return
            }
            let entry = RemoteEntry(identifier: identifier.rawValue, isFolder: item.isFolder, version: item.itemVersion.contentVersion, size: item.size)
            if let held = tree.records.updateValue(item, forKey: path) {
                let left: FileProviderItemRecord
                if comesAfter(held, item) {
                    tree.records[path] = held
                    left = item
                } else {
                    tree.entries[path] = entry
                    left = held
                }
                tree.skipped.append(path.text)
                logger.warning("a second item with one name was left out", metadata: ["path": "\(path)", "identifier": "\(left.itemIdentifier)"])
                return
            }
            tree.entries[path] = entry
        }
        for folder in folders { take(folder) }
        if let byIdentifier {
            for item in byIdentifier.values where !item.isFolder { take(item) }
        } else {
            for item in listed where !item.isFolder { take(item) }
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
