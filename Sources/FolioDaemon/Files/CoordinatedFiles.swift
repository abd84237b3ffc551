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

    /// Copies `item` into `folder` as `name` (default: the item's own), or `name 2`, `name 3`…
    /// when that is taken, inside a coordinated read of it (its presenters save first), through
    /// descriptors (``ResolvedItem/copy(into:named:)``): the copy is of what `item` is, whatever
    /// its path names by now. It is a new document: it keeps the tags, not the identity.
    func copy(_ item: ResolvedItem, into folder: ResolvedItem, named name: String? = nil) throws(CoordinationFailure) -> ResolvedItem {
        var outcome: Result<ResolvedItem, CoordinationFailure> = .failure(CoordinationFailure(kind: .failed, message: "the copy did not run"))
        var error: NSError?
        let base = name ?? (item.path as NSString).lastPathComponent
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(readingItemAt: URL(fileURLWithPath: item.path), options: [], error: &error) {
            _ in
            outcome = Self.underFreeName(base, of: item, in: folder) { name throws(Errno) in try item.copy(into: folder, named: name) }
        }
        if let error { throw CoordinationFailure(kind: .failed, message: "cannot copy \(item.path): \(error.localizedDescription)") }
        return try outcome.get()
    }

    /// Moves `item` into `folder`, coordinated `.forMoving` (presenters follow it), through the
    /// descriptor of the folder it was found in (``ResolvedItem/move(into:named:)``): what moves is
    /// `item`, or nothing. As `name` exactly, refused (``CoordinationFailure/exists(_:)``) when
    /// that is taken; without one, under the item's own name or the first free one after it.
    func move(_ item: ResolvedItem, into folder: ResolvedItem, named name: String? = nil) throws(CoordinationFailure) -> ResolvedItem {
        let target = name.map { folder.path + "/" + $0 } ?? AvailableName.path(for: (item.path as NSString).lastPathComponent, in: folder.path)
        var outcome: Result<ResolvedItem, CoordinationFailure> = .failure(CoordinationFailure(kind: .failed, message: "the move did not run"))
        var error: NSError?
        let coordinator = FileCoordinator(filePresenter: nil, engine: engine)
        coordinator.coordinate(
            writingItemAt: URL(fileURLWithPath: item.path), options: .forMoving, writingItemAt: URL(fileURLWithPath: target),
            options: .forReplacing, error: &error
        ) { from, _ in
            if let name {
                do throws(Errno) { outcome = .success(try item.move(into: folder, named: name)) } catch {
                    outcome = .failure(error == .fileExists ? .exists(target) : Self.failure(moving: item, into: folder, error))
                }
            } else {
                outcome = Self.underFreeName((item.path as NSString).lastPathComponent, of: item, in: folder) { name throws(Errno) in
                    try item.move(into: folder, named: name)
                }
            }
            if case .success(let moved) = outcome { coordinator.item(at: from, didMoveTo: URL(fileURLWithPath: moved.path)) }
        }
        if let error { throw CoordinationFailure(kind: .failed, message: "cannot move \(item.path): \(error.localizedDescription)") }
        return try outcome.get()
    }

    /// Runs `body` with `name`, or `name 2`, `name 3`… when that is taken in `folder`.
    private static func underFreeName(
        _ name: String, of item: ResolvedItem, in folder: ResolvedItem, _ body: (String) throws(Errno) -> ResolvedItem
    ) -> Result<ResolvedItem, CoordinationFailure> {
        for _ in 0..<100 {
            let free = (AvailableName.path(for: name, in: folder.path) as NSString).lastPathComponent
            do { return .success(try body(free)) } catch .fileExists { continue } catch {
                return .failure(failure(moving: item, into: folder, error))
            }
        }
        return .failure(CoordinationFailure(kind: .failed, message: "no free name for \(item.path) in \(folder.path)"))
    }

    private static func failure(moving item: ResolvedItem, into folder: ResolvedItem, _ error: Errno) -> CoordinationFailure {
        let reason = error == .resourceBusy ? "it changed while it was moved" : "\(error)"
        return CoordinationFailure(kind: .failed, message: "cannot put \(item.path) in \(folder.path): \(reason)")
    }

    /// Sets the item's tags (`user.xdg.tags`) inside a coordinated metadata-only write, through
    /// its descriptor.
    func setTags(_ tags: [String], of item: ResolvedItem) throws(CoordinationFailure) {
        var failure: (any Error)?
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(
            writingItemAt: URL(fileURLWithPath: item.path), options: .contentIndependentMetadataOnly, error: &error
        ) { _ in
            do { try FileTags.setTags(tags, of: URL(fileURLWithPath: item.descriptorPath)) } catch { failure = error }
        }
        if let problem = failure ?? error {
            throw CoordinationFailure(kind: .failed, message: "cannot tag \(item.path): \((problem as NSError).localizedDescription)")
        }
    }

    /// Creates the folder `name` (which must not exist) in `folder`, inside a coordinated write;
    /// returns it.
    func makeFolder(named name: String, in folder: ResolvedItem) throws(CoordinationFailure) -> ResolvedItem {
        let path = folder.path + "/" + name
        var outcome: Result<ResolvedItem, CoordinationFailure> = .failure(CoordinationFailure(kind: .failed, message: "the creation did not run"))
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: URL(fileURLWithPath: path), options: [], error: &error) { _ in
            guard mkdirat(folder.descriptor.rawValue, name, 0o755) == 0 else {
                let code = errno
                outcome = .failure(
                    code == EEXIST ? .exists(path) : CoordinationFailure(kind: .failed, message: "cannot create \(path): \(String(cString: strerror(code)))"))
                return
            }
            do { outcome = .success(try folder.entry(name)) } catch {
                outcome = .failure(CoordinationFailure(kind: .failed, message: "cannot open \(path) once made"))
            }
        }
        if let error { throw CoordinationFailure(kind: .failed, message: "cannot create \(path): \(error.localizedDescription)") }
        return try outcome.get()
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
