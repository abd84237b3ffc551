import Folio
import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The daemon's own changes to the user's files (the picker's, the web page's), each inside a
/// coordination as one more arbiter client, so that apps presenting a file save first, step aside
/// and hear where it went. They block on claims: call them on a blocking pool.
struct CoordinatedFiles: Sendable {
    let engine: LocalCoordinationEngine

    /// Moves `source` to `target`, which must not exist (checked and renamed in one step);
    /// coordinated `.forMoving`/`.forReplacing`, so presenters follow the item. Across file
    /// systems, a copy (user attributes kept) and a removal.
    func move(_ source: String, to target: String) throws(CoordinationFailure) {
        var failure: CoordinationFailure?
        var error: NSError?
        let coordinator = FileCoordinator(filePresenter: nil, engine: engine)
        coordinator.coordinate(
            writingItemAt: URL(fileURLWithPath: source), options: .forMoving, writingItemAt: URL(fileURLWithPath: target),
            options: .forReplacing, error: &error
        ) { from, to in
            do {
                try FilePath(from.path).rename(toNewItemAt: FilePath(to.path))
            } catch .fileExists {
                failure = .exists(to.path)
                return
            } catch .improperLink {
                do {
                    try FileManager.default.copyItem(atPath: from.path, toPath: to.path)
                    DocumentIdentity.copyUserAttributes(from: from.path, to: to.path)
                    try FileManager.default.removeItem(atPath: from.path)
                } catch {
                    failure = CoordinationFailure(
                        kind: .failed, message: "cannot move \(source) to another file system: \((error as NSError).localizedDescription)")
                    return
                }
            } catch {
                failure = CoordinationFailure(kind: .failed, message: "cannot move \(source): \(error)")
                return
            }
            coordinator.item(at: from, didMoveTo: to)
        }
        if let failure { throw failure }
        if let error { throw CoordinationFailure(kind: .failed, message: "cannot move \(source): \(error.localizedDescription)") }
    }

    /// Copies `source` to `target` (which must not exist) inside a coordinated read, so its
    /// presenters save first. The copy is a new document: it keeps the tags, not the identity.
    func copy(_ source: String, to target: String) throws(CoordinationFailure) {
        var failure: (any Error)?
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(
            readingItemAt: URL(fileURLWithPath: source), options: [], error: &error
        ) { url in
            do { try FileManager.default.copyItem(atPath: url.path, toPath: target) } catch { failure = error }
        }
        if let problem = failure ?? error {
            if (try? FileStatus(path: FilePath(target))) != nil, failure != nil, (problem as NSError).code == CocoaError.fileWriteFileExists.rawValue {
                throw .exists(target)
            }
            throw CoordinationFailure(kind: .failed, message: "cannot copy \(source): \((problem as NSError).localizedDescription)")
        }
        try? FilePath(target).removeExtendedAttribute(named: DocumentIdentity.attribute)
    }

    /// Copies `item` into `folder` under a name not taken there, inside a coordinated read of it
    /// (its presenters save first), through descriptors (``ResolvedItem/copy(into:named:)``): the
    /// copy is of what `item` is, whatever its path names by now. It is a new document: its
    /// contents only, without the original's identity or other attributes.
    func copy(_ item: ResolvedItem, into folder: ResolvedItem) throws(CoordinationFailure) -> ResolvedItem {
        var outcome: Result<ResolvedItem, CoordinationFailure> = .failure(CoordinationFailure(kind: .failed, message: "the copy did not run"))
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(readingItemAt: URL(fileURLWithPath: item.path), options: [], error: &error) {
            _ in
            outcome = Self.underFreeName(of: item, in: folder) { name throws(Errno) in try item.copy(into: folder, named: name) }
        }
        if let error { throw CoordinationFailure(kind: .failed, message: "cannot copy \(item.path): \(error.localizedDescription)") }
        return try outcome.get()
    }

    /// Moves `item` into `folder` under a name not taken there, coordinated `.forMoving`, through
    /// the descriptor of the folder it was found in (``ResolvedItem/move(into:named:)``): what
    /// moves is `item`, or nothing.
    func move(_ item: ResolvedItem, into folder: ResolvedItem) throws(CoordinationFailure) -> ResolvedItem {
        let target = AvailableName.path(for: (item.path as NSString).lastPathComponent, in: folder.path)
        var outcome: Result<ResolvedItem, CoordinationFailure> = .failure(CoordinationFailure(kind: .failed, message: "the move did not run"))
        var error: NSError?
        let coordinator = FileCoordinator(filePresenter: nil, engine: engine)
        coordinator.coordinate(
            writingItemAt: URL(fileURLWithPath: item.path), options: .forMoving, writingItemAt: URL(fileURLWithPath: target),
            options: .forReplacing, error: &error
        ) { from, _ in
            outcome = Self.underFreeName(of: item, in: folder) { name throws(Errno) in try item.move(into: folder, named: name) }
            if case .success(let moved) = outcome { coordinator.item(at: from, didMoveTo: URL(fileURLWithPath: moved.path)) }
        }
        if let error { throw CoordinationFailure(kind: .failed, message: "cannot move \(item.path): \(error.localizedDescription)") }
        return try outcome.get()
    }

    /// Runs `body` with the item's name, or `name 2`, `name 3`… when that is taken in `folder`.
    private static func underFreeName(
        of item: ResolvedItem, in folder: ResolvedItem, _ body: (String) throws(Errno) -> ResolvedItem
    ) -> Result<ResolvedItem, CoordinationFailure> {
        for _ in 0..<100 {
            let name = (AvailableName.path(for: (item.path as NSString).lastPathComponent, in: folder.path) as NSString).lastPathComponent
            do { return .success(try body(name)) } catch .fileExists { continue } catch {
                let reason = error == .resourceBusy ? "it changed while it was moved" : "\(error)"
                return .failure(CoordinationFailure(kind: .failed, message: "cannot put \(item.path) in \(folder.path): \(reason)"))
            }
        }
        return .failure(CoordinationFailure(kind: .failed, message: "no free name for \(item.path) in \(folder.path)"))
    }

    /// Sets the item's tags (`user.xdg.tags`) inside a coordinated metadata-only write.
    func setTags(_ tags: [String], of path: String) throws(CoordinationFailure) {
        var failure: (any Error)?
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(
            writingItemAt: URL(fileURLWithPath: path), options: .contentIndependentMetadataOnly, error: &error
        ) { url in
            do { try FileTags.setTags(tags, of: url) } catch { failure = error }
        }
        if let problem = failure ?? error {
            throw CoordinationFailure(kind: .failed, message: "cannot tag \(path): \((problem as NSError).localizedDescription)")
        }
    }

    /// Creates the folder `path` (which must not exist) inside a coordinated write.
    func makeFolder(_ path: String) throws(CoordinationFailure) {
        var failure: CoordinationFailure?
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: URL(fileURLWithPath: path), options: [], error: &error) { url in
            if mkdir(url.path, 0o755) != 0 {
                let code = errno
                failure = code == EEXIST ? .exists(path) : CoordinationFailure(kind: .failed, message: "cannot create \(path): \(String(cString: strerror(code)))")
            }
        }
        if let failure { throw failure }
        if let error { throw CoordinationFailure(kind: .failed, message: "cannot create \(path): \(error.localizedDescription)") }
    }
}

extension CoordinationFailure {
    /// The target of a move, copy or creation exists already (`fileWriteFileExists` as its code).
    static func exists(_ path: String) -> CoordinationFailure {
        CoordinationFailure(kind: .failed, message: "\(path) exists already", code: CocoaError.fileWriteFileExists.rawValue)
    }

    /// Whether this is ``exists(_:)``.
    var isExists: Bool { kind == .failed && code == CocoaError.fileWriteFileExists.rawValue }
}
