import Folio
import FolioSystem
import Foundation
import SystemPackage

/// What a sandboxed app gets from the folder its executable is in: the executable, and the exact
/// files its `DT_NEEDED` entries resolve to through its `RUNPATH` (`$ORIGIN` included), and theirs
/// in turn — each opened once, checked as what that descriptor is (a regular file whose real
/// location is in that folder or a system folder), and bound by that descriptor. Nothing else of
/// the folder, whatever it is named: a link called `libhome.so` leads nowhere.
struct SandboxLibraries {
    /// A file to bind: the opened item, at the path the app (and its loader) looks for it.
    struct Bind {
        let item: ResolvedItem
        let destination: String
    }

    /// The executable as the app runs it (its real path).
    let executable: String
    /// The folder it is in (real).
    let folder: String
    /// The executable and the libraries it loads from its folder.
    let binds: [Bind]
    /// Libraries named in the folder that were not bound, and why.
    let refused: [(path: String, reason: String)]

    /// Resolves `executable` and what it loads; `systemFolders` are bound whole already.
    init(executable path: String, systemFolders: [String]) throws(ResolvedItem.Failure) {
        let opened = try ResolvedItem.resolve(path)
        guard opened.status.kind == .regular else { throw .system(.notPermitted) }
        executable = opened.path
        folder = (opened.path as NSString).deletingLastPathComponent
        func isSystem(_ path: String) -> Bool { systemFolders.contains { CoordinationPath.isSelfOrDescendant(path, of: $0) } }
        var binds = [Bind(item: opened, destination: opened.path)]
        var refused: [(path: String, reason: String)] = []
        var queue = [(item: opened, origin: folder)]
        let folder = folder
        while let (object, origin) = queue.popLast() {
            guard let readable = try? object.open(.readOnly) else { continue }
            let section = ELFDynamicSection(of: readable)
            try? readable.close()
            guard let section else { continue }
            let searchPath = section.searchPath.map {
                CoordinationPath.normalize($0.replacingOccurrences(of: "${ORIGIN}", with: origin).replacingOccurrences(of: "$ORIGIN", with: origin))
            }
            for name in section.needed where !name.contains("/") {
                for directory in searchPath where directory.hasPrefix("/") && CoordinationPath.isSelfOrDescendant(directory, of: folder) {
                    let candidate = directory + "/" + name
                    if binds.contains(where: { $0.destination == candidate }) { break }
                    guard let library = try? ResolvedItem.resolve(candidate) else { continue }
                    guard library.status.kind == .regular else {
                        refused.append((candidate, "not a regular file"))
                        continue
                    }
                    guard CoordinationPath.isSelfOrDescendant(library.path, of: folder) || isSystem(library.path) else {
                        refused.append((candidate, "it leads out of \(folder), to \(library.path)"))
                        continue
                    }
                    binds.append(Bind(item: library, destination: candidate))
                    queue.append((library, directory))
                    break
                }
            }
        }
        self.binds = binds
        self.refused = refused
    }
}
