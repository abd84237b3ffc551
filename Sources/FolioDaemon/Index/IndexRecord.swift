import Folio
import FolioSystem
import Foundation
import GRDB
import Synchronization
import SystemPackage
import UniformTypes

/// One item as the index stores it: what `lstat`, the name and `user.xdg.tags` say.
struct IndexRecord: Sendable, Equatable {
    var id: Int64 = 0
    var path: String
    var name: String
    var kind: FileStatus.Kind
    var size: Int64
    var modified: Double
    var type: String
    /// Whether the type is still the name's and waits for the content to decide it (the name says
    /// nothing, names several types, or the file names its own: `user.mime_type`); the index's
    /// typing pass looks at these after the crawl.
    var typePending = false
    /// Whether the file names its own type (`user.mime_type`): read as listed, never kept from
    /// before (setting the attribute changes neither the size nor the date).
    var declaresType = false
    /// `"\n"`-separated with a `"\n"` at each end (so one tag is found exactly), nil for none.
    var tags: String?
    var device: UInt64
    var inode: UInt64
    var lastUsed: Double?
    var favoriteRank: Int64?
    /// `NSMetadataUbiquitousItemDownloadingStatusNotDownloaded` for a placeholder, `…Current` for
    /// a file in the drive replica, nil otherwise.
    var downloadStatus: String?
    /// A drive item's state with the server (columns `uploaded`, `downloading`, `pinned`,
    /// `sync_error`, `download_percent`), from the drive's journal and the daemon's transfers:
    /// nil outside the drive.
    var sync: UbiquitousSyncState?
    /// Whether the document has unresolved conflict versions (filled in by the browser page from
    /// the version store; the index does not keep it).
    var conflict = false
    /// How well the text matches a query's text searches (set for that query's results only).
    var relevance: Double?

    /// The record of the document a placeholder stub stands for (its path and name, the size,
    /// date and type the stub gives, not downloaded), or nil when `name` is not a valid stub's.
    /// The stub's own small bytes are read; the document's content never is.
    static func promised(stubPath path: String, name: String, status: FileStatus, types: IndexTypes) -> IndexRecord? {
        guard PlaceholderStub.isStubName(name), let facts = MetadataFacts.item(path: path, name: name, status: status) else { return nil }
        var record = IndexRecord(path: facts.path, name: facts.name, status: status, types: types)
        record.size = facts.size
        record.modified = facts.modified
        if let type = facts.typeIdentifier { record.type = type }
        // The stub says the document's type; the document itself is not here to look at.
        record.typePending = false
        record.tags = nil
        record.downloadStatus = facts.downloadingStatus
        return record
    }

    /// From a file's status; the type from the name (cached per extension), the tags from the file;
    /// current when it is a file in the drive replica `driveRoot`.
    /// `attributeNames`: the file's extended attributes' names when the caller read them.
    init(path: String, name: String, status: FileStatus, types: IndexTypes, driveRoot: String? = nil, attributeNames: [String]? = nil) {
        self.path = path
        self.name = name
        kind = status.kind
        size = status.kind == .directory ? 0 : status.size
        modified = status.modificationTime
        (type, typePending) = types.identifier(name: name, kind: status.kind)
        // One call lists the attributes (none, for most files); only those present are read.
        let attributes =
            status.kind == .symbolicLink ? [] : attributeNames ?? (try? FilePath(path).extendedAttributeNames(followSymlinks: false)) ?? []
        tags = attributes.contains(FileTags.attribute) ? Self.encode(tags: FileTags.tags(atPath: path)) : nil
        if status.kind == .regular, attributes.contains(UTType.mimeTypeAttribute) {
            typePending = true
            declaresType = true
        }
        device = status.device
        inode = status.inode
        downloadStatus = MetadataFacts.downloadingStatus(ofItemAt: path, kind: status.kind, driveRoot: driveRoot)
    }

    /// The records of one folder's entries as the index keeps them: a placeholder stands for the
    /// document it promises, unless the document is there too.
    static func records(of entries: [DirectoryScanner.Entry], types: IndexTypes, driveRoot: String?) -> [IndexRecord] {
        // The folder's names, made only when it holds a placeholder (hashing every name of every
        // folder was a fiftieth of a crawl).
        var names: Set<String>?
        var records: [IndexRecord] = []
        records.reserveCapacity(entries.count)
        for entry in entries {
            var record = IndexRecord(
                path: entry.path, name: entry.name, status: entry.status, types: types, driveRoot: driveRoot, attributeNames: entry.attributeNames)
            if PlaceholderStub.isStubName(entry.name) {
                if names == nil { names = Set(entries.map(\.name)) }
                guard names?.contains(PlaceholderStub.documentName(ofStub: entry.name)) == false,
                    let promised = IndexRecord.promised(stubPath: entry.path, name: entry.name, status: entry.status, types: types)
                else { continue }
                record = promised
            }
            records.append(record)
        }
        return records
    }

    /// The columns `init(row:)` reads.
    static let columns =
        "id, path, name, kind, size, modified, type, tags, device, inode, last_used, favorite_rank, download_status, uploaded, downloading, pinned, sync_error, download_percent, type_pending"

    /// How many columns ``columns`` names (a query's next column is at this index).
    static let columnCount = 19

    init(row: Row) {
        id = row[0]
        path = row[1]
        name = row[2]
        kind = IndexWire.kind(row[3])
        size = row[4]
        modified = row[5]
        type = row[6]
        tags = row[7]
        device = UInt64(bitPattern: row[8])
        inode = UInt64(bitPattern: row[9])
        lastUsed = row[10]
        favoriteRank = row[11]
        downloadStatus = row[12]
        if let uploaded: Bool = row[13] {
            sync = UbiquitousSyncState(isUploaded: uploaded, isDownloading: row[14] ?? false, isPinned: row[15] ?? false, error: row[16], percentDownloaded: row[17])
        }
        typePending = row[18]
    }

    /// An unchanged file (same name, inode, size and date) whose name leaves its type to its
    /// content keeps the type its content gave: a listing again does not undo the typing pass. A
    /// renamed one is typed again (its old name may have decided its type: a move marks it).
    mutating func keepContentType(of old: IndexRecord) {
        guard typePending, !declaresType, !old.typePending, old.name == name, old.kind == kind, old.device == device, old.inode == inode, old.size == size,
            old.modified == modified
        else { return }
        type = old.type
        typePending = false
    }

    /// Whether the item may have text to index: a regular file whose content is here.
    var hasContent: Bool { kind == .regular && downloadStatus != NSMetadataUbiquitousItemDownloadingStatusNotDownloaded }

    /// Whether the content (or the type that says how to read it) differs from `other`'s.
    func contentDiffers(from other: IndexRecord) -> Bool {
        kind != other.kind || size != other.size || modified != other.modified || inode != other.inode || device != other.device || type != other.type
    }

    /// Whether what the file system says differs from what the index has.
    func differs(from other: IndexRecord) -> Bool {
        kind != other.kind || size != other.size || modified != other.modified || inode != other.inode || device != other.device
            || tags != other.tags || type != other.type || typePending != other.typePending || downloadStatus != other.downloadStatus || sync != other.sync
    }

    var facts: MetadataFacts {
        MetadataFacts(
            path: path, name: name, kind: kind, size: size, modified: modified, typeIdentifier: type,
            tags: tags.map(Self.decode(tags:)) ?? [], lastUsed: lastUsed, favoriteRank: favoriteRank, downloadingStatus: downloadStatus, sync: sync,
            relevance: relevance)
    }

    static func encode(tags: [String]) -> String? {
        tags.isEmpty ? nil : "\n" + tags.joined(separator: "\n") + "\n"
    }

    static func decode(tags: String) -> [String] {
        tags.split(separator: "\n").map(String.init)
    }
}

/// The types the index gives by name, and those it holds.
final class IndexTypes: Sendable {
    /// Every identifier the index may hold (a superset: types are never forgotten).
    private let present = Mutex<Set<String>>([])

    /// The type of an item by its name and kind, as content detection reads names (shared-mime-info's
    /// globs, then declared extensions), and whether its content must decide it: a regular file
    /// whose name does not settle its type, a folder whose name has an extension (a package's),
    /// a special file.
    func identifier(name: String, kind: FileStatus.Kind) -> (identifier: String, pending: Bool) {
        let found: (identifier: String, pending: Bool)
        switch kind {
        case .regular:
            let named = UTType.named(name)
            found = (named.type.identifier, !named.decided)
        case .directory:
            found = (UTType.folder.identifier, !UTType.extensionOfFile(named: name).isEmpty)
        case .symbolicLink:
            return (UTType.symbolicLink.identifier, false)
        default:
            found = (MetadataFacts.type(name: name, kind: kind).identifier, true)
        }
        present.withLock { _ = $0.insert(found.identifier) }
        return found
    }

    /// Records identifiers found in the database.
    func note(_ identifiers: [String]) {
        present.withLock { $0.formUnion(identifiers) }
    }

    /// The identifiers the index may hold that conform to `identifier`.
    func conforming(to identifier: String) -> [String] {
        let candidates = present.withLock { $0.union([UTType.folder.identifier, UTType.symbolicLink.identifier]) }
        return candidates.filter { candidate in
            guard let type = UTType(candidate) else { return candidate == identifier }
            return type.identifier == identifier || type.supertypesNearestFirst.contains { $0.identifier == identifier }
        }
    }
}
