import Folio
import FolioSystem
import Foundation
import Logging
import NIOCore

extension ClientSession {
    /// Runs an access request (docs/protocol.md, "Access"); nil when the reply comes later (the picker).
    func access(_ request: AccessRequest, id: Int64?) throws(CoordinationFailure) -> WireValue? {
        let access = context.access
        switch request {
        case .check(let path, let write):
            guard let app else { return ["allowed": true, "reason": "not an app", "path": .string(path)] }
            let decision = access.policy.check(app: app, path: path, write: write)
            return ["allowed": .bool(decision.allowed), "reason": .string(decision.reason), "path": .string(decision.path)]
        case .listGrants(let asked):
            if let app, asked != nil, asked != app { throw CoordinationFailure(kind: .denied, message: "an app sees only its own grants") }
            let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
            return ["grants": .array(access.currentGrants(of: app ?? asked).map { $0.wireValue(home: home) })]
        case .revoke(let number, let target, let path):
            try userOnly("revoke grants")
            let real = path.map { (try? FileStatus.canonicalPath($0)) ?? CoordinationPath.normalize($0) }
            let removed: [Grant]
            do {
                removed = try access.grants.revoke { grant in
                    if let number { return grant.id == Int64(number) }
                    return grant.app == target && (real == nil || grant.path == real)
                }
            } catch {
                throw CoordinationFailure(kind: .failed, message: "cannot revoke: \(error)")
            }
            guard !removed.isEmpty else { throw CoordinationFailure(kind: .notFound, message: "no such grant") }
            for grant in removed { context.logger.info("grant revoked", metadata: ["grant": "\(grant.id)", "app": "\(grant.app)"]) }
            return ["revoked": .array(removed.map { .int($0.id) })]
        case .grant(let target, let path, let write, let persistent):
            try userOnly("grant access")
            return try access.grant(app: target, path: path, write: write, persistent: persistent, source: .user, session: nil)
                .wireValue(home: ProcessInfo.processInfo.environment["HOME"] ?? "")
        case .createBookmark(let path, let options, let keys, let base):
            let decision = try access.require(app: app, path: path, write: false)
            if let app, let grant = decision?.grant, !grant.isPersistent {
                // Bookmarking a granted item keeps the grant: the app may come back to it after relaunch.
                var kept = grant
                kept.isPersistent = true
                kept.session = nil
                do { try access.grants.save(kept) } catch { throw CoordinationFailure(kind: .failed, message: "cannot keep the grant: \(error)") }
                context.logger.debug("grant kept by a bookmark", metadata: ["app": "\(app)", "grant": "\(grant.id)"])
            }
            let data: Data
            do {
                data = try BookmarkService.make(
                    path: decision?.path ?? path, options: options, keys: Set(keys.map(URLResourceKey.init(rawValue:))), base: base,
                    key: try access.key())
            } catch let failure as CoordinationFailure {
                throw failure
            } catch {
                throw CoordinationFailure(kind: .notFound, message: "\(path): \((error as NSError).localizedDescription)")
            }
            return ["data": .string(data.base64EncodedString())]
        case .resolveBookmark(let data, let base):
            let resolution: BookmarkService.Resolution
            do {
                resolution = try BookmarkService.resolve(data, base: base, key: try access.key())
            } catch let failure as CoordinationFailure {
                throw failure
            } catch let error as CocoaError where error.code == .fileReadCorruptFile {
                throw CoordinationFailure(kind: .corrupt, message: error.localizedDescription)
            } catch {
                throw CoordinationFailure(kind: .notFound, message: (error as NSError).localizedDescription)
            }
            let readOnly = resolution.isReadOnly
            try access.require(app: app, path: resolution.path, write: false)
            let writable = app.map { access.policy.check(app: $0, path: resolution.path, write: true).allowed } ?? true
            return [
                "path": .string(resolution.path), "stale": .bool(resolution.isStale), "directory": .bool(resolution.isDirectory),
                "readOnly": .bool(readOnly || !writable),
            ]
        case .bookmarkValues(let data):
            guard let values = BookmarkService.storedValues(data, key: try access.key()) else {
                throw CoordinationFailure(kind: .corrupt, message: "not valid bookmark data")
            }
            return ["values": .object(values)]
        case .pick(let request):
            guard let id else { throw CoordinationFailure(kind: .invalid, message: "picker.pick is a request: give it an id") }
            try access.picker.pick(request, from: self, reply: id)
            return nil
        case .attachPicker:
            try userOnly("serve as the picker")
            try access.picker.attach(self)
        case .choose(let number, let paths):
            try access.picker.choose(number, paths: paths, from: self)
        case .appSocket(let target):
            try userOnly("open app sockets")
            guard let id else { throw CoordinationFailure(kind: .invalid, message: "app.socket is a request: give it an id") }
            guard access.catalog.manifest(target) != nil else { throw CoordinationFailure(kind: .notFound, message: "no app \(target) is registered") }
            try context.appSockets.socket(for: target).whenComplete { result in
                switch result {
                case .success(let path): self.write([WireFrame.result(.int(id), ["path": .string(path)])])
                case .failure(let error):
                    self.write([WireFrame.error(.int(id), CoordinationFailure(kind: .failed, message: "cannot listen for \(target): \(error)"))])
                }
            }
            return nil
        case .container:
            guard let app else { throw CoordinationFailure(kind: .invalid, message: "this connection is not an app") }
            do { return ["path": .string(try access.catalog.container(app).url.path)] } catch {
                throw CoordinationFailure(kind: .failed, message: "cannot make the container: \(error)")
            }
        }
        return [:]
    }

    /// Refuses a request only the user's own tools may make.
    func userOnly(_ what: String) throws(CoordinationFailure) {
        if let app { throw CoordinationFailure(kind: .denied, message: "an app (\(app)) may not \(what)") }
    }
}
