import Folio
import FolioSystem
import Foundation

extension CoordinatedFiles {
    /// The versions kept of `item` (a document resolved once), oldest first: its identity read
    /// through its descriptor.
    func versions(of item: ResolvedItem) throws(CoordinationFailure) -> [FileVersion] {
        do { return try FileVersion.versions(reaching: item.descriptorPath, at: item.path) } catch {
            throw CoordinationFailure(kind: .failed, message: "cannot read the versions of \(item.path): \(error.localizedDescription)")
        }
    }

    /// The version `id` of `item`.
    func version(_ id: String, of item: ResolvedItem) throws(CoordinationFailure) -> FileVersion {
        guard let version = try versions(of: item).first(where: { $0.identifier == id }) else {
            throw CoordinationFailure(kind: .notFound, message: "no version \(id) of \(item.path)")
        }
        return version
    }

    /// Puts version `id`'s contents in place of `item`, the entry of `folder` it was found as,
    /// inside a coordinated write: the current contents are kept as a version first, so a restore
    /// can itself be undone. Everything goes through the descriptors the check opened.
    func restore(_ id: String, of item: ResolvedItem, in folder: ResolvedItem) throws(CoordinationFailure) {
        let chosen = try version(id, of: item)
        try write(item, "restore a version of") {
            try chosen.replaceItem(named: Self.name(of: item), inFolderAt: folder.descriptorPath, reaching: item.descriptorPath)
        }
    }

    /// Resolves the conflicts of `item` (the entry of `folder` it was found as): `keep` is the
    /// version whose contents win (nil: the current contents); with `keepBoth`, each losing
    /// conflict version is also saved beside the document under a name of its own. Every
    /// unresolved conflict version is then marked resolved. Returns the paths of the copies kept.
    func resolveConflicts(of item: ResolvedItem, in folder: ResolvedItem, keep: String?, keepBoth: Bool) throws(CoordinationFailure) -> [String] {
        let conflicts = (try versions(of: item)).filter { $0.isConflict && !$0.isResolved }
        guard !conflicts.isEmpty else { throw CoordinationFailure(kind: .notFound, message: "\(item.path) has no unresolved conflict") }
        let winner = try keep.map { id throws(CoordinationFailure) in try version(id, of: item) }
        var kept: [String] = []
        try write(item, "resolve the conflicts of") {
            let name = Self.name(of: item)
            let stem = (name as NSString).deletingPathExtension, suffix = (name as NSString).pathExtension
            func keepCopy(of source: ResolvedItem, from computer: String) throws {
                let wanted = "\(stem) (\(computer))" + (suffix.isEmpty ? "" : "." + suffix)
                let free = (AvailableName.path(for: wanted, in: folder.path) as NSString).lastPathComponent
                kept.append(try source.copy(into: folder, named: free).path)
            }
            if let winner {
                if keepBoth { try keepCopy(of: item, from: "this computer") }
                try winner.replaceItem(named: name, inFolderAt: folder.descriptorPath, reaching: item.descriptorPath)
            }
            if keepBoth {
                for conflict in conflicts where conflict.identifier != winner?.identifier {
                    try keepCopy(of: try ResolvedItem.resolve(conflict.url.path), from: conflict.localizedNameOfSavingComputer ?? "another computer")
                }
            }
            for conflict in conflicts { conflict.isResolved = true }
        }
        return kept
    }

    private static func name(of item: ResolvedItem) -> String { (item.path as NSString).lastPathComponent }

    private func write(_ item: ResolvedItem, _ what: String, _ body: () throws -> Void) throws(CoordinationFailure) {
        var failure: (any Error)?
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: URL(fileURLWithPath: item.path), options: [], error: &error) { _ in
            do { try body() } catch let problem { failure = problem }
        }
        if let problem = failure ?? error {
            if let coordination = problem as? CoordinationFailure { throw coordination }
            throw CoordinationFailure(kind: .failed, message: "cannot \(what) \(item.path): \((problem as NSError).localizedDescription)")
        }
    }
}
