import Folio
import GRDB
import Synchronization

/// What the index leaves out (table `exclusions`): folders the user excluded (`folio index
/// exclude`: the folder and everything in it, or only the text of what is in it), and folders
/// holding a marker file (`.nomedia`, `.trackerignore`, `.metadata_never_index`: what is in them
/// is not indexed, the folder itself is), found as folders are listed. Hidden files and
/// everything in hidden folders below a root are indexed by name, their text never read. Read
/// from any thread; changed on the index queue, in the transaction that writes the table.
final class IndexExclusions: Sendable {
    enum Kind: Int, Sendable {
        /// The folder and everything in it are not indexed (the user's).
        case everything = 0
        /// What is in the folder is not indexed (a marker file's).
        case contents = 1
        /// Everything in the folder is indexed by name, its text never read (the user's).
        case text = 2

        /// The word `index.status` uses.
        var name: String {
            switch self {
            case .everything: "everything"
            case .contents: "contents"
            case .text: "text"
            }
        }
    }

    /// The names of the marker files that keep a folder's contents out of the index.
    static let markers: Set<String> = [".nomedia", ".trackerignore", ".metadata_never_index"]

    private let folders = Mutex<[String: Kind]>([:])

    /// Reads the table.
    func load(_ db: Database) throws {
        var loaded: [String: Kind] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT path, kind FROM exclusions") {
            if let kind = Kind(rawValue: row[1]) { loaded[row[0]] = kind }
        }
        folders.withLock { $0 = loaded }
    }

    /// Records (or, with nil, forgets) `path`'s exclusion, in the table and here.
    func set(_ kind: Kind?, for path: String, _ db: Database) throws {
        if let kind {
            try db.execute(sql: "INSERT OR REPLACE INTO exclusions (path, kind) VALUES (?, ?)", arguments: [path, kind.rawValue])
        } else {
            try db.execute(sql: "DELETE FROM exclusions WHERE path = ?", arguments: [path])
        }
        folders.withLock { $0[path] = kind }
    }

    /// The exclusion recorded for `path` itself.
    func kind(of path: String) -> Kind? { folders.withLock { $0[path] } }

    /// Every exclusion, by path.
    var all: [(path: String, kind: Kind)] { folders.withLock { $0.map { ($0.key, $0.value) }.sorted { $0.path < $1.path } } }

    /// Whether the entries of folder `path` are left out: it or a folder above it is excluded
    /// whole, or holds a marker.
    func excludesEntries(of path: String) -> Bool {
        folders.withLock { folders in
            guard !folders.isEmpty else { return false }
            return ([path] + CoordinationPath.ancestors(of: path)).contains { folders[$0] == .everything || folders[$0] == .contents }
        }
    }

    /// Whether nothing is excluded.
    var isEmpty: Bool { folders.withLock { $0.isEmpty } }

    /// Whether the entry `path` of a folder whose entries are indexed is itself excluded (one
    /// lookup: the folder's own check covered what is above).
    func excludesEntry(_ path: String) -> Bool {
        folders.withLock { $0.isEmpty ? false : $0[path] == .everything }
    }

    /// Whether `path` is left out of the index, wherever it is.
    func excludes(_ path: String) -> Bool {
        folders.withLock { folders in
            guard !folders.isEmpty else { return false }
            if folders[path] == .everything { return true }
            return CoordinationPath.ancestors(of: path).contains { folders[$0] == .everything || folders[$0] == .contents }
        }
    }

    /// Whether the text of the document at `path` is read: not in a folder excluded for its text,
    /// not hidden and not in a hidden folder below the root `root` it was found under.
    func readsText(_ path: String, roots: [String]) -> Bool {
        let root = roots.filter { CoordinationPath.isSelfOrDescendant(path, of: $0) }.max { $0.utf8.count < $1.utf8.count }
        if let root, path.utf8.count > root.utf8.count {
            let below = path.utf8.dropFirst(root.utf8.count)
            // A component starting with a dot: "/." anywhere below the root.
            if zip(below, below.dropFirst()).contains(where: { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: ".") }) { return false }
        }
        return folders.withLock { folders in
            folders.isEmpty || !CoordinationPath.ancestors(of: path).contains { folders[$0] == .text }
        }
    }
}
