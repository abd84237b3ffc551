import Folio
import Foundation

extension CoordinatedFiles {
    /// The versions kept of the document at `path`, oldest first.
    func versions(of path: String) throws(CoordinationFailure) -> [FileVersion] {
        do { return try FileVersion.versions(ofItemAt: URL(fileURLWithPath: path)) } catch {
            throw CoordinationFailure(kind: .failed, message: "cannot read the versions of \(path): \(error.localizedDescription)")
        }
    }

    /// The version `id` of the document at `path`.
    func version(_ id: String, of path: String) throws(CoordinationFailure) -> FileVersion {
        guard let version = try versions(of: path).first(where: { $0.identifier == id }) else {
            throw CoordinationFailure(kind: .notFound, message: "no version \(id) of \(path)")
        }
        return version
    }

    /// Puts version `id`'s contents in place, inside a coordinated write; the current contents are
    /// kept as a version first, so a restore can itself be undone.
    func restore(_ id: String, of path: String) throws(CoordinationFailure) {
        let chosen = try version(id, of: path)
        try write(path, "restore a version of") { url in
            _ = try FileVersion.addOfItem(at: url, withContentsOf: url)
            _ = try chosen.replaceItem(at: url)
        }
    }

    /// Resolves the document's conflicts: `keep` is the version whose contents win (nil: the
    /// current contents); with `keepBoth`, each losing conflict version is also saved beside the
    /// document under a name of its own. Every unresolved conflict version is then marked resolved.
    /// Returns the paths of the copies kept.
    func resolveConflicts(of path: String, keep: String?, keepBoth: Bool) throws(CoordinationFailure) -> [String] {
        let conflicts = (try versions(of: path)).filter { $0.isConflict && !$0.isResolved }
        guard !conflicts.isEmpty else { throw CoordinationFailure(kind: .notFound, message: "\(path) has no unresolved conflict") }
        let winner = try keep.map { id throws(CoordinationFailure) in try version(id, of: path) }
        var kept: [String] = []
        try write(path, "resolve the conflicts of") { url in
            let folder = url.deletingLastPathComponent().path
            let name = url.lastPathComponent
            let stem = (name as NSString).deletingPathExtension, suffix = (name as NSString).pathExtension
            func keepCopy(of source: URL, from computer: String) throws {
                let target = AvailableName.path(for: "\(stem) (\(computer))" + (suffix.isEmpty ? "" : "." + suffix), in: folder)
                try FileManager.default.copyItem(at: source, to: URL(fileURLWithPath: target))
                kept.append(target)
            }
            if let winner {
                if keepBoth { try keepCopy(of: url, from: "this computer") }
                _ = try FileVersion.addOfItem(at: url, withContentsOf: url)
                _ = try winner.replaceItem(at: url)
            }
            if keepBoth {
                for conflict in conflicts where conflict.identifier != winner?.identifier {
                    try keepCopy(of: conflict.url, from: conflict.localizedNameOfSavingComputer ?? "another computer")
                }
            }
            for conflict in conflicts { conflict.isResolved = true }
        }
        return kept
    }

    private func write(_ path: String, _ what: String, _ body: (URL) throws -> Void) throws(CoordinationFailure) {
        var failure: (any Error)?
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: URL(fileURLWithPath: path), options: [], error: &error) { url in
            do { try body(url) } catch let problem { failure = problem }
        }
        if let problem = failure ?? error {
            if let coordination = problem as? CoordinationFailure { throw coordination }
            throw CoordinationFailure(kind: .failed, message: "cannot \(what) \(path): \((problem as NSError).localizedDescription)")
        }
    }
}
