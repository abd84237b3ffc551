import Folio
import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Checks a picker front end's choice against the request, and carries out the request's mode.
/// Each chosen path and each document to export or move is resolved once, when the choice is
/// checked, and everything after acts on what that resolved — copies and moves through
/// descriptors (``ResolvedItem/copy(into:named:)``, ``ResolvedItem/move(into:named:)``), grants on
/// the item — so a name an app swaps meanwhile cannot make the picker carry out, or grant, a
/// file the check did not see.
enum PickerChoice {
    /// A checked choice: the items chosen (documents for open and import, one destination folder
    /// for export and move), and the documents to export or move.
    struct Checked {
        var chosen: [ResolvedItem]
        var sources: [ResolvedItem]
    }

    static func validate(
        _ paths: [String], for request: PickerRequest, app: String?, access: AccessService,
        admit: (ResolvedItem) throws(CoordinationFailure) -> Void = { _ in }
    ) throws(CoordinationFailure) -> Checked {
        func refuse(_ message: String) -> CoordinationFailure { CoordinationFailure(kind: .invalid, message: message) }
        guard !paths.isEmpty else { throw refuse("choose at least one item, or cancel") }
        var chosen: [ResolvedItem] = []
        for path in paths {
            let item = try resolveChoice(path, access: access)
            try admit(item)
            let containers = access.catalog.paths.containersDirectory
            let own = app.map { containers + "/" + $0 }
            if CoordinationPath.isAncestor(containers, of: item.path), own.map({ item.path != $0 && !CoordinationPath.isAncestor($0, of: item.path) }) ?? true {
                throw refuse("\(path) is inside another app's container")
            }
            switch request.mode {
            case .open, .import:
                if !request.types.isEmpty {
                    let type =
                        item.status.kind == .directory
                        ? UTType.folder
                        : UTType.contentType(named: URL(fileURLWithPath: item.path), status: item.status, reading: FilePath(item.descriptorPath)).type
                    let wanted = request.types.compactMap { UTType($0) }
                    guard wanted.contains(where: { type.conforms(to: $0) }) else {
                        throw refuse("\(path) is not of a requested type (\(request.types.joined(separator: ", ")))")
                    }
                }
            case .export, .move:
                guard item.status.kind == .directory else { throw refuse("\(path) is not a folder to \(request.mode.rawValue) into") }
            }
            chosen.append(item)
        }
        var sources: [ResolvedItem] = []
        switch request.mode {
        case .open, .import:
            guard chosen.count == 1 || request.allowsMultipleSelection else { throw refuse("this picker allows one item only") }
        case .export, .move:
            guard chosen.count == 1 else { throw refuse("choose one destination folder") }
            for source in request.urls {
                let item = try access.resolve(app: app, path: source, write: request.mode == .move)
                guard item.exists, item.path != "/" else { throw refuse("no item at \(source) to \(request.mode.rawValue)") }
                sources.append(item)
            }
        }
        return Checked(chosen: chosen, sources: sources)
    }

    /// Resolves a path the user chose (``AccessService/resolveUserPath(_:)``): in a folder an app
    /// may write, from that folder's descriptor (`RESOLVE_BENEATH`), so a link the app put there
    /// leads nowhere and the user choosing what the picker showed there can never pick a file
    /// outside it.
    private static func resolveChoice(_ path: String, access: AccessService) throws(CoordinationFailure) -> ResolvedItem {
        do { return try access.resolveUserPath(path) } catch {
            throw CoordinationFailure(kind: .invalid, message: "no item at \(path)")
        }
    }

    /// Carries out the request; returns the URLs for the app (`path`, `scoped`, `readOnly`).
    static func carryOut(
        _ checked: Checked, request: PickerRequest, app: String?, client: UInt32?, access: AccessService, imported: (String) -> Void
    ) throws(CoordinationFailure) -> [WireValue] {
        func failed(_ message: String, _ error: any Error) -> CoordinationFailure {
            CoordinationFailure(kind: .failed, message: "\(message): \((error as NSError).localizedDescription)")
        }
        func scoped(_ item: ResolvedItem) throws(CoordinationFailure) -> WireValue {
            if let app { try access.grant(app: app, item: item, write: true, persistent: false, source: .picker, session: client) }
            return ["path": .string(item.path), "scoped": true, "readOnly": false]
        }
        let files = CoordinatedFiles(engine: access.coordination)
        var result: [WireValue] = []
        switch request.mode {
        case .import:
            let base = app.map { AppContainer(appIdentifier: $0, paths: access.catalog.paths).temporaryURL.path }
                ?? access.catalog.paths.socketDirectory
            let path = "\(base)/Imports/\(UUID().uuidString)"
            let folder: ResolvedItem
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                folder = try ResolvedItem.resolve(path)
            } catch { throw failed("cannot make \(path)", error) }
            imported(folder.path)
            for source in checked.chosen {
                let copy = try files.copy(source, into: folder)
                result.append(["path": .string(copy.path), "scoped": false, "readOnly": false])
            }
        case .open:
            for item in checked.chosen {
                result.append(try scoped(item))
                if let app { try writeReference(to: item, app: app, access: access) }
            }
        case .export:
            for source in checked.sources { result.append(try scoped(try files.copy(source, into: checked.chosen[0]))) }
        case .move:
            for source in checked.sources {
                let target = try files.move(source, into: checked.chosen[0])
                result.append(try scoped(target))
                if let app { try writeReference(to: target, app: app, access: access) }
            }
        }
        return result
    }

    /// A reference document for an original outside the app's container (as iCloud writes for open
    /// and move): `Library/References/<identity>.json` with the original's bookmark.
    private static func writeReference(to item: ResolvedItem, app: String, access: AccessService) throws(CoordinationFailure) {
        let path = item.path
        do {
            let container = try access.catalog.container(app)
            let bookmark = try BookmarkService.make(item: item, path: path, options: 0, keys: nil, base: nil, key: try access.key(), app: app)
            let identity = DocumentIdentity.identifier(of: item, creating: true)
            let document: WireValue = [
                "path": .string(path), "name": .string((path as NSString).lastPathComponent), "bookmark": .string(bookmark.base64EncodedString()),
                "created": .double(Date().timeIntervalSince1970),
            ]
            try AtomicFile.write(Data(document.serialized()), to: container.referencesURL.path + "/\(identity).json")
        } catch let failure as CoordinationFailure {
            throw failure
        } catch {
            throw CoordinationFailure(kind: .failed, message: "cannot write the reference document for \(path): \(error)")
        }
    }
}
