import Folio
import FolioSystem
import Foundation
import Logging
import SystemPackage

/// The isolation layer in the daemon: registered apps and their containers, grants, the access
/// policy, the key bookmarks are signed with, and the document picker.
final class AccessService: Sendable {
    let catalog: AppCatalog
    let grants: GrantStore
    let policy: AccessPolicy
    let picker: PickerService
    /// The daemon's own coordinations (the picker's copies and moves), as one more arbiter client.
    let coordination: LocalCoordinationEngine
    let logger: Logger
    private let keyResult: Result<BookmarkKey, any Error>

    init(paths: FolioPaths, store: IndexStore, arbiter: CoordinationArbiter, pools: DaemonPools, logger: Logger) throws {
        coordination = LocalCoordinationEngine(arbiter: arbiter, logger: logger)
        catalog = AppCatalog(paths: paths)
        grants = try GrantStore(pool: store.pool)
        policy = AccessPolicy(catalog: catalog, grants: grants)
        self.logger = logger
        keyResult = Result { try BookmarkKey.load(path: paths.configDirectory + "/bookmark.key") }
        picker = PickerService(pools: pools, logger: logger)
        picker.access = self
        Self.sweepImports(paths: paths)
    }

    /// The key bookmarks are signed with.
    func key() throws(CoordinationFailure) -> BookmarkKey {
        do { return try keyResult.get() } catch {
            throw CoordinationFailure(kind: .failed, message: "the bookmark key cannot be read: \(error)")
        }
    }

    /// The folders apps may write in besides their containers: those granted them read-write,
    /// and their ubiquity containers in the Drive.
    func writableFolders() -> [String] {
        let granted = grants.grants(of: nil).filter { $0.isFolder && $0.allowsWriting }.map(\.path)
        let drive = catalog.paths.driveDirectory
        let ubiquity = catalog.identifiers().compactMap(catalog.manifest).flatMap { manifest in
            manifest.ubiquitousContainers.map { drive + "/" + $0.identifier }
        }
        return granted + ubiquity
    }

    /// Resolves a path the user names (the picker's choices, a grant): in a folder an app may
    /// write — its container, a folder granted it read-write, its ubiquity container — beneath
    /// that folder (`RESOLVE_BENEATH`), so a link the app put there can never turn what the user
    /// chose into a file outside it.
    func resolveUserPath(_ path: String) throws(ResolvedItem.Failure) -> ResolvedItem {
        try ResolvedItem.resolve(CoordinationPath.normalize(path), confinedBelow: [catalog.paths.containersDirectory], to: writableFolders())
    }

    /// Refuses unless `app` (nil: the user's own tools, which reach everything the user can) may
    /// reach `path`.
    @discardableResult
    func require(app: String?, path: ClientPath, write: Bool) throws(CoordinationFailure) -> AccessPolicy.Decision? {
        guard let app else { return nil }
        let decision = policy.check(app: app, path: path, write: write)
        guard decision.allowed else {
            logger.notice("access refused", metadata: ["app": "\(app)", "path": "\(path)", "write": "\(write)", "reason": "\(decision.reason)"])
            // The reason stays in the log: it may name where a link leads or what exists.
            throw CoordinationFailure(
                kind: .denied, message: "\(app) may not \(write ? "write" : "read") \(path)",
                code: (write ? CocoaError.Code.fileWriteNoPermission : CocoaError.Code.fileReadNoPermission).rawValue)
        }
        return decision
    }

    /// Resolves `path` once and refuses unless `app` (nil: the user's own tools, which reach
    /// everything the user can) may reach what it resolved to: the item the request then acts on,
    /// through its descriptor or its real path — never through `path` again.
    func resolve(app: String?, path: ClientPath, write: Bool) throws(CoordinationFailure) -> ResolvedItem {
        if let item = try require(app: app, path: path, write: write)?.item { return item }
        do { return try path.resolve(allowMissing: true) } catch {
            throw CoordinationFailure(kind: .notFound, message: "no item at \(path)")
        }
    }

    /// The path a request acts on: for an app, the real path its check resolved (what it was
    /// checked as); for the user's own tools, `path`.
    func checkedPath(app: String?, path: ClientPath, write: Bool) throws(CoordinationFailure) -> String {
        try require(app: app, path: path, write: write)?.path ?? path.comparedAsText
    }

    /// Grants `app` the item at `path` (which exists), resolved as ``resolveUserPath(_:)``: a link
    /// an app put in a folder of its own cannot turn the grant to a file outside it.
    @discardableResult
    func grant(
        app: String, path: String, write: Bool, persistent: Bool, source: Grant.Source, session: UInt32?
    ) throws(CoordinationFailure) -> Grant {
        let item: ResolvedItem
        do { item = try resolveUserPath(path) } catch { throw CoordinationFailure(kind: .notFound, message: "no item at \(path)") }
        return try grant(app: app, item: item, write: write, persistent: persistent, source: source, session: session)
    }

    /// Grants `app` the item `item` as it was resolved: its identity read (or given) through its
    /// descriptor, its device and inode from it, its real path read back from it.
    @discardableResult
    func grant(
        app: String, item: ResolvedItem, write: Bool, persistent: Bool, source: Grant.Source, session: UInt32?
    ) throws(CoordinationFailure) -> Grant {
        guard catalog.manifest(app) != nil else { throw CoordinationFailure(kind: .notFound, message: "no app \(app) is registered") }
        guard item.exists else { throw CoordinationFailure(kind: .notFound, message: "no item at \(item.path)") }
        do {
            let identity = DocumentIdentity.identifier(of: item, creating: true)
            return try grants.add(
                app: app, reference: ItemReference(path: item.path, identity: identity, device: item.status.device, inode: item.status.inode),
                write: write, persistent: persistent, folder: item.status.kind == .directory, source: source, session: session)
        } catch {
            throw CoordinationFailure(kind: .failed, message: "cannot record the grant: \(error)")
        }
    }

    /// The grants of `app` (all when nil), with paths brought up to date where their items moved.
    func currentGrants(of app: String?) -> [Grant] {
        for grant in grants.grants(of: app) where !BookmarkResolver.matches(grant.path, grant.reference) {
            if let (path, _) = BookmarkResolver.locate(grant.reference, at: grant.path) { grants.relocate(grant, to: path) }
        }
        return grants.grants(of: app)
    }

    /// The persistent grants of `app` whose items are still there, each with the item opened as
    /// its identity check found it (at its last path, or where a search finds it moved). A path
    /// that now names another file yields nothing.
    func liveGrants(of app: String) -> [(grant: Grant, item: ResolvedItem)] {
        var live: [(grant: Grant, item: ResolvedItem)] = []
        for grant in grants.grants(of: app) where grant.isPersistent {
            var item = try? ResolvedItem.resolve(grant.path)
            if let found = item, AccessPolicy.isGrantedItem(grant.reference, item: found) {
                live.append((grant, found))
                continue
            }
            item = BookmarkResolver.locate(grant.reference, at: grant.path).flatMap { try? ResolvedItem.resolve($0.0) }
            if let found = item, AccessPolicy.isGrantedItem(grant.reference, item: found) {
                grants.relocate(grant, to: found)
                live.append((grant, found))
            }
        }
        return live
    }

    /// Documents imported by the picker live in `tmp/Imports` until their app exits; at start-up no
    /// app is connected, so every import folder left behind goes.
    private static func sweepImports(paths: FolioPaths) {
        guard let apps = try? FileManager.default.contentsOfDirectory(atPath: paths.containersDirectory) else { return }
        for app in apps { try? FileManager.default.removeItem(atPath: "\(paths.containersDirectory)/\(app)/tmp/Imports") }
    }
}
