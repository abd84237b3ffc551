import Folio
import Foundation
import FolioSystem
import SystemPackage

/// What the web page may reach: the user's home folder, the indexed roots and Folio's own folders
/// (the Drive, app containers), and nothing else. Every path a request names passes here first; a
/// path that is not absolute and plain (`..`, `.`, empty components, a NUL), or that leads outside
/// through a symbolic link, is refused before anything is read or changed.
struct WebScope: Sendable {
    /// The folders the page may browse, canonical.
    let roots: [String]
    /// Folio's own folders (its data, state, configuration, runtime), never reached even when a
    /// root holds them, except the places in `openings` (the Drive, the app containers).
    let closed: [String]
    let openings: [String]

    init(roots: [String], closed: [String] = [], openings: [String] = []) {
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

    /// An existing item the page may reach: its folder resolves inside a root, and so does the
    /// item itself unless it is a symbolic link (`followingLink` false: the link itself is renamed,
    /// moved or trashed, never what it points to).
    @discardableResult
    func existing(_ path: String, followingLink: Bool = true) throws(Refusal) -> FileStatus {
        try Self.checkForm(path)
        guard let status = try? FileStatus(path: FilePath(path)) else { throw Refusal(status: 404, message: "no such item: \(path)") }
        if status.kind == .symbolicLink && !followingLink {
            try inside(parentOf: path)
            return status
        }
        guard let real = try? FileStatus.canonicalPath(path), contains(real) else { throw outside(path) }
        return (try? FileStatus(path: FilePath(real))) ?? status
    }

    /// A folder the page may reach (following links inside the scope).
    func folder(_ path: String) throws(Refusal) {
        guard try existing(path).kind == .directory else { throw Refusal(status: 400, message: "not a folder: \(path)") }
    }

    /// Refuses unless the folder holding `path` resolves inside a root.
    func inside(parentOf path: String) throws(Refusal) {
        try Self.checkForm(path)
        let parent = CoordinationPath.ancestors(of: path).first ?? "/"
        guard let real = try? FileStatus.canonicalPath(parent), contains(real) else { throw outside(path) }
    }

    /// Whether a canonical path is a root or under one, and not in Folio's own folders.
    func contains(_ real: String) -> Bool {
        guard roots.contains(where: { CoordinationPath.isSelfOrDescendant(real, of: $0) }) else { return false }
        return openings.contains { CoordinationPath.isSelfOrDescendant(real, of: $0) }
            || !closed.contains { CoordinationPath.isSelfOrDescendant(real, of: $0) }
    }

    /// An existing item the page may rename, move or trash: reachable, and not a root nor one of
    /// the places Folio keeps (the Drive, the containers folder).
    func changeable(_ path: String) throws(Refusal) {
        try existing(path, followingLink: false)
        let real = (try? FileStatus.canonicalPath((path as NSString).deletingLastPathComponent)).map { $0 + "/" + (path as NSString).lastPathComponent } ?? path
        // Nor a folder that holds Folio's own (`~/.local` holds its data): they stay where they are.
        guard !roots.contains(real), !(openings + closed).contains(where: { CoordinationPath.isSelfOrDescendant($0, of: real) }) else {
            throw Refusal(status: 400, message: "\(path) cannot be renamed, moved or trashed")
        }
    }

    private func outside(_ path: String) -> Refusal {
        Refusal(status: 403, message: "\(path) is outside what this page may browse")
    }
}
