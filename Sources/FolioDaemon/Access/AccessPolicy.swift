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
        /// The item decided on, resolved once: what the request then acts on.
        var item: ResolvedItem? = nil
    }

    /// Whether `app` may read (or write) the item at `path`, which need not exist yet when its
    /// folder does. The path is resolved once (``ClientPath/resolve(allowMissing:)``); the decision
    /// carries that item, and whoever acts on the decision acts on it, not on the path.
    func check(app: String, path: ClientPath, write: Bool) -> Decision {
        let item: ResolvedItem
        do {
            item = try path.resolve(allowMissing: true)
        } catch {
            let reason: String
            switch error {
            case .notAbsolute: reason = "not an absolute path"
            case .danglingLink(let link): reason = "\(link) is a symbolic link that leads nowhere"
            case .missing: reason = "no folder above \(path)"
            case .outside: reason = "\(path) leads out"
            case .system(let code): reason = "cannot reach \(path): \(code)"
            }
            return Decision(allowed: false, reason: reason, path: path.description, grant: nil)
        }
        return check(app: app, item: item, write: write)
    }

    /// ``check(app:path:write:)`` for a path the daemon holds itself (an index row, a bookmark's
    /// record), never one a client sent: those come as a ``ClientPath``.
    func check(app: String, knownPath path: String, write: Bool) -> Decision {
        check(app: app, path: ClientPath(path), write: write)
    }

    /// Whether `app` may read (or write) `item`: every fact decided on is read from its descriptor.
    func check(app: String, item: ResolvedItem, write: Bool) -> Decision {
        let real = item.path
        func deny(_ reason: String) -> Decision { Decision(allowed: false, reason: reason, path: real, grant: nil, item: item) }
        let status = item.exists ? item.status : nil

        // The app's container, and its ubiquity containers in the drive (`Drive/<container-id>`,
        // those its manifest lists in `NSUbiquitousContainers`): its own, as on iOS, without a grant.
        let ubiquity = (catalog.manifest(app)?.ubiquitousContainers ?? []).map { catalog.paths.driveDirectory + "/" + $0.identifier }
        for (folder, name) in [(catalog.paths.containersDirectory + "/" + app, "container")] + ubiquity.map({ ($0, "ubiquity container") }) {
            guard let container = try? ResolvedItem.resolve(folder), container.status.kind == .directory,
                real == container.path || CoordinationPath.isAncestor(container.path, of: real)
            else { continue }
            if let status, status.kind == .regular, status.linkCount > 1 {
                if let grant = matchingGrant(app: app, item: item) { return decide(grant, write: write, item: item) }
                return deny("\(real) has other hard links, which may lead out of the \(name)")
            }
            return Decision(allowed: true, reason: "in the app's \(name)", path: real, grant: nil, item: item)
        }
        if status != nil, let grant = matchingGrant(app: app, item: item) { return decide(grant, write: write, item: item) }
        if let status, status.kind == .regular, status.linkCount > 1 {
            // Reached only through its folder: another name of it may lie anywhere.
            return deny("\(real) has other hard links; it is reachable only through a grant of its own")
        }
        if let grant = folderGrant(app: app, item: item) { return decide(grant, write: write, item: item) }
        if let grant = relatedGrant(app: app, item: item) { return decide(grant, write: write, item: item) }
        return deny("\(app) holds no grant for \(real)")
    }

    private func decide(_ grant: Grant, write: Bool, item: ResolvedItem) -> Decision {
        if write && !grant.allowsWriting {
            return Decision(allowed: false, reason: "the grant to \(grant.path) allows reading only", path: item.path, grant: grant, item: item)
        }
        return Decision(allowed: true, reason: "grant \(grant.id)", path: item.path, grant: grant, item: item)
    }

    /// A file grant for the item itself (``isGrantedItem(_:item:)``); a grant whose item moved is
    /// brought to where it is now.
    private func matchingGrant(app: String, item: ResolvedItem) -> Grant? {
        for grant in grants.grants(of: app) where !grant.isFolder || item.status.kind == .directory {
            guard Self.isGrantedItem(grant.reference, item: item) else { continue }
            grants.relocate(grant, to: item)
            return grant
        }
        return nil
    }

    /// The item's identity attribute, if it has one.
    private static func identity(of item: ResolvedItem) -> String? {
        item.extendedAttribute(named: DocumentIdentity.attribute).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// Whether `item` is the one a grant was made for. A grant follows its document's identity,
    /// which stays with it across renames and safe saves — but the identity attribute is bytes a
    /// copy carries (`cp -a`), so it counts only on the inode the grant recorded, or on a new
    /// inode when the recorded one no longer holds that identity (a save by rename, a download, a
    /// move across file systems); while the recorded inode still holds it, the newcomer is a copy.
    /// For an item that could not be given an identity (the grant's identity is then the inode
    /// form) the device and inode decide only with the item's birth time or inode generation,
    /// never alone; and never for an item that has an identity of its own.
    static func isGrantedItem(_ reference: ItemReference, item: ResolvedItem) -> Bool {
        guard item.exists else { return false }
        let identity = identity(of: item)
        if reference.identity.hasPrefix("inode-") {
            return identity == nil && reference.device == item.status.device && reference.inode == item.status.inode
                && DocumentIdentity.inodeForm(reference.identity, namesItemAt: item.descriptorPath, status: item.status, followSymlinks: true)
        }
        guard identity == reference.identity else { return false }
        return DocumentIdentity.isSameDocument(reference, device: item.status.device, inode: item.status.inode)
    }

    /// A folder grant for one of the item's folders, found by walking up from the item's own
    /// folder by descriptor (`..` from each), so a name swapped above it changes nothing.
    private func folderGrant(app: String, item: ResolvedItem) -> Grant? {
        let folders = grants.grants(of: app).filter(\.isFolder)
        guard !folders.isEmpty, var current = Self.folder(of: item) else { return nil }
        for _ in 0..<4096 {
            if folders.contains(where: { $0.reference.device == current.status.device && $0.reference.inode == current.status.inode }),
                let grant = folders.first(where: { Self.isGrantedItem($0.reference, item: current) })
            {
                grants.relocate(grant, to: current)
                return grant
            }
            guard current.path != "/", let parent = try? current.parent() else { return nil }
            current = parent
        }
        return nil
    }

    /// The folder an item is in, checked to hold it still: the item's existing folder itself when
    /// the item does not exist yet.
    private static func folder(of item: ResolvedItem) -> ResolvedItem? {
        guard item.exists else { return try? item.existingPart() }
        guard item.path != "/", let folder = try? ResolvedItem.resolve((item.path as NSString).deletingLastPathComponent),
            let entry = try? FileStatus(in: folder.descriptor, name: (item.path as NSString).lastPathComponent),
            entry.device == item.status.device, entry.inode == item.status.inode
        else { return nil }
        return folder
    }

    /// A grant to a document next to the item with the same name but for the extension, when that
    /// extension is one of the app's related item types.
    private func relatedGrant(app: String, item: ResolvedItem) -> Grant? {
        let name = (item.path as NSString).lastPathComponent
        let extensionName = (name as NSString).pathExtension.lowercased()
        guard !extensionName.isEmpty, catalog.relatedExtensions(app).contains(extensionName) else { return nil }
        let stem = (name as NSString).deletingPathExtension
        guard item.exists || item.missing.count == 1, let folder = Self.folder(of: item) else { return nil }
        let folderPath = (item.path as NSString).deletingLastPathComponent
        for grant in grants.grants(of: app) where !grant.isFolder {
            let grantName = (grant.path as NSString).lastPathComponent
            guard (grantName as NSString).deletingPathExtension == stem,
                let granted = try? ResolvedItem.resolve(folderPath + "/" + grantName),
                let entry = try? FileStatus(in: folder.descriptor, name: grantName),
                entry.device == granted.status.device, entry.inode == granted.status.inode,
                Self.isGrantedItem(grant.reference, item: granted)
            else { continue }
            return grant
        }
        return nil
    }
}
