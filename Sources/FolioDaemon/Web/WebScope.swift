import Folio
import Foundation
import FolioSystem
import SystemPackage

/// What the web page may reach: the user's home folder, the indexed roots and Folio's own folders
/// (the Drive, app containers), and nothing else.
///
/// Every path a request names is resolved here once (``ResolvedItem``): opened, checked as what
/// that descriptor is and where it really is, and then acted on only through it, so a name swapped
/// for a symbolic link after the check leads nowhere new. A path that is not absolute and plain
/// (`..`, `.`, empty components, a NUL), or that leads outside, is refused before anything is read
/// or changed. A path in a folder an app may write (its container, a folder granted it, its
/// ubiquity container) is resolved from that folder's descriptor (`RESOLVE_BENEATH`): a link the
/// app put there never leads the page out of it.
struct WebScope: Sendable {
    /// The folders the page may browse, canonical.
    let roots: [String]
    /// Folio's own folders (its data, state, configuration, runtime), never reached even when a
    /// root holds them, except the places in `openings` (the Drive, the app containers).
    let closed: [String]
    let openings: [String]
    /// The folder of the apps' containers, canonical; nil when it does not exist.
    let containers: String?
    /// The other folders apps may write in (those granted them read-write, their ubiquity
    /// containers in the Drive), canonical: a path inside one resolves beneath it.
    let writable: [String]

    init(roots: [String], closed: [String] = [], openings: [String] = [], containers: String? = nil, writable: [String] = []) {
        func canonical(_ paths: [String]) -> [String] {
            var result: [String] = []
            for path in paths {
                guard let real = try? FileStatus.canonicalPath(path), !result.contains(real) else { continue }
                result.append(real)
            }
            return result
        }
        self.roots = canonical(roots)
        self.closed = canonical(closed)
        self.openings = canonical(openings)
        self.containers = containers.flatMap { try? FileStatus.canonicalPath($0) }
        self.writable = canonical(writable)
    }

    /// Refusals name the path as given (it came from the page) and never what a link leads to.
    struct Refusal: Error, Sendable {
        let status: Int
        let message: String
    }

    /// Checks a path's form: absolute, every component a plain name, at most `PATH_MAX` bytes.
    static func checkForm(_ path: String) throws(Refusal) {
        guard path.hasPrefix("/"), path.utf8.count < 4096, !path.utf8.contains(0) else {
            throw Refusal(status: 400, message: "not an absolute path: \(path.prefix(200))")
        }
        guard path == "/" || !path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
        else {
            throw Refusal(status: 400, message: "a path must not hold empty, . or .. components: \(path.prefix(200))")
        }
    }

    /// Checks a name for a new item: one plain component.
    static func checkName(_ name: String) throws(Refusal) {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.utf8.contains(0), name.utf8.count <= 255 else {
            throw Refusal(status: 400, message: "not a valid name: \(name.prefix(200))")
        }
    }

    /// An existing item the page may reach, resolved once (following links): its real location
    /// is inside a root and not in Folio's own folders.
    func item(_ path: String) throws(Refusal) -> ResolvedItem {
        let item = try resolve(path)
        guard contains(item.path) else { throw outside(path) }
        return item
    }

    /// A folder the page may reach (following links inside the scope).
    func folder(_ path: String) throws(Refusal) -> ResolvedItem {
        let folder = try item(path)
        guard folder.status.kind == .directory else { throw Refusal(status: 400, message: "not a folder: \(path)") }
        return folder
    }

    /// An existing entry itself — a symbolic link is the link, never what it points to — and the
    /// folder it is in, which the page may reach. What is renamed, moved or trashed.
    func entry(_ path: String) throws(Refusal) -> (folder: ResolvedItem, item: ResolvedItem) {
        try Self.checkForm(path)
        guard path != "/" else { throw Refusal(status: 400, message: "/ cannot be renamed, moved or trashed") }
        let folder = try self.folder(CoordinationPath.ancestors(of: path).first ?? "/")
        do {
            return (folder, try folder.entry((path as NSString).lastPathComponent))
        } catch {
            throw Refusal(status: 404, message: "no such item: \(path)")
        }
    }

    /// A document the page may write in place (a version restored, a conflict resolved): a regular
    /// file itself, not a link, and the folder it is in.
    func document(_ path: String) throws(Refusal) -> (folder: ResolvedItem, item: ResolvedItem) {
        let entry = try entry(path)
        guard entry.item.status.kind == .regular else { throw Refusal(status: 400, message: "not a document: \(path)") }
        return entry
    }

    /// An entry the page may rename, move or trash: reachable, and not a root nor one of the places
    /// Folio keeps (the Drive, the containers folder), nor a folder that holds them (`~/.local`
    /// holds Folio's data: it stays where it is).
    func changeable(_ path: String) throws(Refusal) -> (folder: ResolvedItem, item: ResolvedItem) {
        func kept(_ real: String) -> Bool {
            roots.contains(real) || (openings + closed).contains { CoordinationPath.isSelfOrDescendant($0, of: real) }
        }
        let refusal = Refusal(status: 400, message: "\(path) cannot be renamed, moved or trashed")
        // Said first, whatever the folder it is in (the Drive's is Folio's own, out of reach).
        if let whole = try? resolve(path), kept(whole.path) { throw refusal }
        let entry = try entry(path)
        guard !kept(entry.item.path) else { throw refusal }
        return entry
    }

    /// Whether a canonical path is a root or under one, and not in Folio's own folders.
    func contains(_ real: String) -> Bool {
        guard roots.contains(where: { CoordinationPath.isSelfOrDescendant(real, of: $0) }) else { return false }
        return openings.contains { CoordinationPath.isSelfOrDescendant(real, of: $0) }
            || !closed.contains { CoordinationPath.isSelfOrDescendant(real, of: $0) }
    }

    /// Opens what `path` names: beneath the app's folder it is in (its container, a folder granted
    /// it read-write, its ubiquity container), else as the kernel follows it.
    private func resolve(_ path: String) throws(Refusal) -> ResolvedItem {
        try Self.checkForm(path)
        do {
            return try ResolvedItem.resolve(path, confinedBelow: containers.map { [$0] } ?? [], to: writable)
        } catch ResolvedItem.Failure.outside {
            throw outside(path)
        } catch {
            throw Refusal(status: 404, message: "no such item: \(path)")
        }
    }

    private func outside(_ path: String) -> Refusal {
        Refusal(status: 403, message: "\(path) is outside what this page may browse")
    }
}
