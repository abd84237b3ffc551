import Folio
import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Checks a picker front end's choice against the request, and carries out the request's mode.
enum PickerChoice {
    /// The canonical paths chosen: documents for open and import, one destination folder for export
    /// and move.
    static func validate(_ paths: [String], for request: PickerRequest, app: String?, access: AccessService) throws(CoordinationFailure)
        -> [String]
    {
        func refuse(_ message: String) -> CoordinationFailure { CoordinationFailure(kind: .invalid, message: message) }
        guard !paths.isEmpty else { throw refuse("choose at least one item, or cancel") }
        var chosen: [String] = []
        for path in paths {
            guard let real = try? FileStatus.canonicalPath(path), let status = try? FileStatus(path: FilePath(real), followSymlinks: true) else {
                throw refuse("no item at \(path)")
            }
            let containers = access.catalog.paths.containersDirectory
            let own = app.map { containers + "/" + $0 }
            if CoordinationPath.isAncestor(containers, of: real), own.map({ real != $0 && !CoordinationPath.isAncestor($0, of: real) }) ?? true {
                throw refuse("\(path) is inside another app's container")
            }
            switch request.mode {
            case .open, .import:
                if !request.types.isEmpty {
                    let type = status.kind == .directory ? UTType.folder : (try? UTType.contentType(ofItemAt: URL(fileURLWithPath: real)).type)
                    let wanted = request.types.compactMap { UTType($0) }
                    guard let type, wanted.contains(where: { type.conforms(to: $0) }) else {
                        throw refuse("\(path) is not of a requested type (\(request.types.joined(separator: ", ")))")
                    }
                }
            case .export, .move:
                guard status.kind == .directory else { throw refuse("\(path) is not a folder to \(request.mode.rawValue) into") }
            }
            chosen.append(real)
        }
        switch request.mode {
        case .open, .import:
            guard chosen.count == 1 || request.allowsMultipleSelection else { throw refuse("this picker allows one item only") }
        case .export, .move:
            guard chosen.count == 1 else { throw refuse("choose one destination folder") }
            for source in request.urls {
                try access.require(app: app, path: source, write: request.mode == .move)
                guard FileManager.default.fileExists(atPath: source) else { throw refuse("no item at \(source) to \(request.mode.rawValue)") }
            }
        }
        return chosen
    }

    /// Carries out the request; returns the URLs for the app (`path`, `scoped`, `readOnly`).
    static func carryOut(
        _ chosen: [String], request: PickerRequest, app: String?, client: UInt32?, access: AccessService, imported: (String) -> Void
    ) throws(CoordinationFailure) -> [WireValue] {
        func failed(_ message: String, _ error: any Error) -> CoordinationFailure {
            CoordinationFailure(kind: .failed, message: "\(message): \((error as NSError).localizedDescription)")
        }
        func scoped(_ path: String) throws(CoordinationFailure) -> WireValue {
            if let app { try access.grant(app: app, path: path, write: true, persistent: false, source: .picker, session: client) }
            return ["path": .string(path), "scoped": true, "readOnly": false]
        }
        var result: [WireValue] = []
        switch request.mode {
        case .import:
            let base = app.map { AppContainer(appIdentifier: $0, paths: access.catalog.paths).temporaryURL.path }
                ?? access.catalog.paths.socketDirectory
            let folder = "\(base)/Imports/\(UUID().uuidString)"
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch { throw failed("cannot make \(folder)", error) }
            imported(folder)
            for source in chosen {
                let copy = try copy(source, into: folder, access: access)
                result.append(["path": .string(copy), "scoped": false, "readOnly": false])
            }
        case .open:
            for path in chosen {
                result.append(try scoped(path))
                if let app { try writeReference(to: path, app: app, access: access) }
            }
        case .export:
            for source in request.urls { result.append(try scoped(try copy(source, into: chosen[0], access: access))) }
        case .move:
            for source in request.urls {
                let target = try move(source, into: chosen[0], access: access)
                result.append(try scoped(target))
                if let app { try writeReference(to: target, app: app, access: access) }
            }
        }
        return result
    }

    /// Copies `source` into `folder` under a name not taken there, inside a coordinated read (its
    /// presenters save first); the copy is a new document (it does not keep the original's identity).
    private static func copy(_ source: String, into folder: String, access: AccessService) throws(CoordinationFailure) -> String {
        let target = AvailableName.path(for: (source as NSString).lastPathComponent, in: folder)
        try CoordinatedFiles(engine: access.coordination).copy(source, to: target)
        return target
    }

    /// Moves `source` into `folder` under a name not taken there, coordinated (`.forMoving`), so
    /// presenters of the document follow it; across file systems, a copy and a removal.
    private static func move(_ source: String, into folder: String, access: AccessService) throws(CoordinationFailure) -> String {
        let target = AvailableName.path(for: (source as NSString).lastPathComponent, in: folder)
        try CoordinatedFiles(engine: access.coordination).move(source, to: target)
        return target
    }

    /// A reference document for an original outside the app's container (as iCloud writes for open
    /// and move): `Library/References/<identity>.json` with the original's bookmark.
    private static func writeReference(to path: String, app: String, access: AccessService) throws(CoordinationFailure) {
        do {
            let container = try access.catalog.container(app)
            let bookmark = try BookmarkService.make(path: path, options: 0, keys: nil, base: nil, key: try access.key(), app: app)
            let identity = try DocumentIdentity.identifier(ofItemAt: path, creating: true)
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
