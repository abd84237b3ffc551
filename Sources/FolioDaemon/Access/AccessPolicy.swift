import Folio
import FolioSystem
import Foundation
import SystemPackage

/// What an app may reach: its own container, and items it holds a grant for — directly, inside a
/// granted folder, or as a related item (`NSIsRelatedItemType`) next to a granted document. Paths
/// are canonicalised by the kernel first, so `..`, symbolic links and absolute tricks cannot lead
/// out of a container or a granted folder; a file in a container with other hard links counts as
/// outside it (its other names may be another app's).
struct AccessPolicy: Sendable {
    let catalog: AppCatalog
    let grants: GrantStore

    /// The outcome of a check.
    struct Decision: Sendable {
        var allowed: Bool
        var reason: String
        /// The canonical path checked.
        var path: String
        /// The grant that allowed it, if one did.
        var grant: Grant?
    }

    /// Whether `app` may read (or write) the item at `path`, which need not exist yet when its folder does.
    func check(app: String, path: String, write: Bool) -> Decision {
        func deny(_ reason: String, _ at: String = path) -> Decision { Decision(allowed: false, reason: reason, path: at, grant: nil) }
        guard path.hasPrefix("/"), !path.utf8.contains(0) else { return deny("not an absolute path") }
        let real: String
        var exists = true
        do {
            real = try FileStatus.canonicalPath(path)
        } catch .noSuchFileOrDirectory {
            exists = false
            if (try? FileStatus(atPath: path, followSymlinks: false)) != nil {
                return deny("\(path) is a symbolic link that leads nowhere")
            }
            // Not there yet (a coordinated create): the nearest folder that exists, canonical, and
            // the missing names below it (already free of `.` and `..`).
            let normalized = CoordinationPath.normalize(path)
            var missing: [Substring] = []
            var folder = normalized
            var found: String?
            while found == nil, folder != "/" {
                missing.insert((folder as NSString).lastPathComponent[...], at: 0)
                folder = (folder as NSString).deletingLastPathComponent
                if (try? FileStatus(atPath: folder, followSymlinks: false))?.kind == .symbolicLink,
                    (try? FileStatus(atPath: folder, followSymlinks: true)) == nil
                {
                    return deny("\(folder) is a symbolic link that leads nowhere")
                }
                found = try? FileStatus.canonicalPath(folder)
            }
            guard let base = found ?? (folder == "/" ? "/" : nil) else { return deny("no folder above \(path)") }
            real = (base == "/" ? "" : base) + "/" + missing.joined(separator: "/")
        } catch {
            return deny("cannot reach \(path): \(error)")
        }
        let status = exists ? try? FileStatus(atPath: real, followSymlinks: true) : nil

        // The app's container, and its ubiquity containers in the drive (`Drive/<container-id>`,
        // those its manifest lists in `NSUbiquitousContainers`): its own, as on iOS, without a grant.
        let ubiquity = (catalog.manifest(app)?.ubiquitousContainers ?? []).map { catalog.paths.driveDirectory + "/" + $0.identifier }
        for (folder, name) in [(catalog.paths.containersDirectory + "/" + app, "container")] + ubiquity.map({ ($0, "ubiquity container") }) {
            guard let container = try? FileStatus.canonicalPath(folder), real == container || CoordinationPath.isAncestor(container, of: real) else { continue }
            if let status, status.kind == .regular, status.linkCount > 1 {
                if let grant = matchingGrant(app: app, path: real, status: status) { return decide(grant, write: write, path: real) }
                return deny("\(real) has other hard links, which may lead out of the \(name)", real)
            }
            return Decision(allowed: true, reason: "in the app's \(name)", path: real, grant: nil)
        }
        if let status, let grant = matchingGrant(app: app, path: real, status: status) { return decide(grant, write: write, path: real) }
        if let status, status.kind == .regular, status.linkCount > 1 {
            // Reached only through its folder: another name of it may lie anywhere.
            return deny("\(real) has other hard links; it is reachable only through a grant of its own", real)
        }
        if let grant = folderGrant(app: app, path: real) { return decide(grant, write: write, path: real) }
        if let grant = relatedGrant(app: app, path: real) { return decide(grant, write: write, path: real) }
        return deny("\(app) holds no grant for \(real)", real)
    }

    private func decide(_ grant: Grant, write: Bool, path: String) -> Decision {
        if write && !grant.allowsWriting {
            return Decision(allowed: false, reason: "the grant to \(grant.path) allows reading only", path: path, grant: grant)
        }
        return Decision(allowed: true, reason: "grant \(grant.id)", path: path, grant: grant)
    }

    /// A file grant for the item itself: same identity, or same device and inode.
    private func matchingGrant(app: String, path: String, status: FileStatus) -> Grant? {
        let identity = Self.identity(of: path)
        for grant in grants.grants(of: app) where !grant.isFolder || status.kind == .directory {
            guard Self.isGrantedItem(grant.reference, identity: identity, path: path, status: status) else { continue }
            if grant.path != path { grants.relocate(grant, to: path) }
            return grant
        }
        return nil
    }

    /// The item's identity attribute, if it has one.
    private static func identity(of path: String) -> String? {
        (try? FilePath(path).extendedAttribute(named: DocumentIdentity.attribute)).flatMap { $0.flatMap { String(validating: $0, as: UTF8.self) } }
    }

    /// Whether the item (its identity attribute, its status) is the one a grant was made for. A grant
    /// follows the item's identity, which stays with it across renames and safe saves. A file
    /// system reuses a deleted file's inode at once, so for an item that could not be given an
    /// identity (the grant's identity is then the inode form) the device and inode decide only
    /// with the item's birth time or inode generation, never alone; and never for an item that has
    /// an identity of its own.
    static func isGrantedItem(_ reference: ItemReference, identity: String?, path: String, status: FileStatus) -> Bool {
        if reference.identity.hasPrefix("inode-") {
            return identity == nil && reference.device == status.device && reference.inode == status.inode
                && DocumentIdentity.inodeForm(reference.identity, namesItemAt: path, status: status, followSymlinks: true)
        }
        return identity == reference.identity
    }

    /// A folder grant for one of the path's folders (the path is canonical: its folders are real).
    private func folderGrant(app: String, path: String) -> Grant? {
        let folders = grants.grants(of: app).filter(\.isFolder)
        guard !folders.isEmpty else { return nil }
        var current = (path as NSString).deletingLastPathComponent
        while true {
            if let status = try? FileStatus(path: FilePath(current), followSymlinks: true),
                folders.contains(where: { $0.reference.device == status.device && $0.reference.inode == status.inode }),
                case let identity = Self.identity(of: current),
                let grant = folders.first(where: { Self.isGrantedItem($0.reference, identity: identity, path: current, status: status) })
            {
                if grant.path != current { grants.relocate(grant, to: current) }
                return grant
            }
            if current == "/" || current.isEmpty { return nil }
            current = (current as NSString).deletingLastPathComponent
        }
    }

    /// A grant to a document next to `path` with the same name but for the extension, when that
    /// extension is one of the app's related item types.
    private func relatedGrant(app: String, path: String) -> Grant? {
        let name = (path as NSString).lastPathComponent
        let extensionName = (name as NSString).pathExtension.lowercased()
        guard !extensionName.isEmpty, catalog.relatedExtensions(app).contains(extensionName) else { return nil }
        let stem = (name as NSString).deletingPathExtension
        let folder = (path as NSString).deletingLastPathComponent
        guard let folderStatus = try? FileStatus(path: FilePath(folder), followSymlinks: true) else { return nil }
        for grant in grants.grants(of: app) where !grant.isFolder {
            let grantName = (grant.path as NSString).lastPathComponent
            guard (grantName as NSString).deletingPathExtension == stem,
                let status = try? FileStatus(path: FilePath((grant.path as NSString).deletingLastPathComponent), followSymlinks: true),
                status.device == folderStatus.device, status.inode == folderStatus.inode,
                BookmarkResolver.matches(grant.path, grant.reference)
            else { continue }
            return grant
        }
        return nil
    }
}
