import Folio
import FolioSystem
import Foundation
import Hummingbird
import Logging
import SystemPackage
import UniformTypes

extension WebRoutes {
    /// Open with: the apps that can open a document (the type's candidates, best first, then the
    /// desktop applications associated with it) and which one opens it by default; making one the default for the type; and opening the document in
    /// an app, which runs `folio open` (its grant or Inbox copy, then the app), as the CLI would.
    static func addOpenRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("handlers") { request, _ in
            await answer {
                let path = try parameter("path", of: request)
                let scope = await state.scope()
                let handlers = try await state.blocking(.slow) {
                    let item = try scope.item(path)
                    guard item.status.kind == .regular else { throw WebScope.Refusal(status: 400, message: "only a document opens in an app: \(path)") }
                    let registry = handlerRegistry(state)
                    let type = Self.type(of: item)
                    let choice = registry.choice(for: type)
                    let catalog = state.context.access.catalog
                    // Folio's apps, then the desktop applications associated with the type.
                    var candidates = registry.candidates(for: type).filter { $0.rank != .none }.map { candidate in
                        HandlerEntry(app: candidate.bundleIdentifier, name: catalog.manifest(candidate.bundleIdentifier)?.name ?? candidate.bundleIdentifier)
                    }
                    candidates += registry.desktopCandidates(for: type).map { HandlerEntry(app: $0.entry.id, name: $0.entry.name, desktop: true) }
                    var chosen: HandlerEntry?
                    switch choice?.handler {
                    case .app(let app): chosen = HandlerEntry(app: app, name: catalog.manifest(app)?.name ?? app)
                    case .desktopEntry(let id): chosen = HandlerEntry(app: id, name: DesktopEntry.find(id, paths: state.paths)?.name ?? id, desktop: true)
                    case nil: break
                    }
                    return Handlers(type: type.identifier, typeName: type.localizedDescription ?? type.identifier, handlers: candidates, defaultHandler: chosen)
                }
                return WebJSON.response(handlers)
            }
        }

        api.post("handlers/default") { request, _ in
            await answer {
                let change = try await body(OpenIn.self, of: request)
                guard let app = change.app else { throw WebScope.Refusal(status: 400, message: "name the app") }
                let scope = await state.scope()
                try await state.blocking(.slow) {
                    let type = Self.type(of: try scope.item(change.path))
                    do { try handlerRegistry(state).setDefaultHandler(app, for: type) } catch {
                        throw WebScope.Refusal(status: 400, message: "\(error)")
                    }
                }
                return WebJSON.response(["app": app])
            }
        }

        api.post("open") { request, _ in
            await answer {
                let change = try await body(OpenIn.self, of: request)
                let scope = await state.scope()
                try await state.blocking(.slow) {
                    let item = try scope.item(change.path)
                    if let app = change.app, app.hasSuffix(".desktop") ? DesktopEntry.find(app, paths: state.paths) == nil : state.context.access.catalog.manifest(app) == nil {
                        throw WebScope.Refusal(status: 404, message: "no app \(app) is registered or installed")
                    }
                    guard item.status.kind == .regular else { throw WebScope.Refusal(status: 400, message: "only a document opens in an app: \(change.path)") }
                    let app: String
                    if let chosen = change.app {
                        app = chosen
                    } else {
                        switch handlerRegistry(state).choice(for: Self.type(of: item))?.handler {
                        case .app(let id), .desktopEntry(let id): app = id
                        case nil: throw WebScope.Refusal(status: 404, message: "no app opens \(change.path)")
                        }
                    }
                    // A Folio app gets the document prepared here, from what was resolved (a grant in
                    // place, or a copy in its Inbox); `folio open` then only starts it. A desktop
                    // application is the user's own program: it is given where the document is.
                    let handed = app.hasSuffix(".desktop") ? item.path : try prepare(item, for: app, state: state)
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                    process.arguments = ["open", "--app", app] + (app.hasSuffix(".desktop") ? [] : ["--prepared"]) + ["--", handed]
                    process.standardInput = FileHandle.nullDevice
                    process.standardOutput = FileHandle.nullDevice
                    process.terminationHandler = { ended in
                        if ended.terminationStatus != 0 {
                            state.logger.notice("an app opened from the browser page ended with an error", metadata: ["status": "\(ended.terminationStatus)"])
                        }
                    }
                    try process.run()
                }
                return WebJSON.response(["path": change.path])
            }
        }
    }

    /// Readies `item` for the Folio app `app` as `folio open` would, from the descriptor: a
    /// persistent read-write grant when the app opens documents in place, else a copy in its
    /// Inbox (a new document). Returns the path the app is given.
    private static func prepare(_ item: ResolvedItem, for app: String, state: WebState) throws -> String {
        let access = state.context.access
        guard let manifest = access.catalog.manifest(app) else { throw WebScope.Refusal(status: 404, message: "no app \(app) is registered") }
        let container = AppContainer(appIdentifier: app, paths: state.paths)
        try container.create()
        if manifest.supportsOpeningDocumentsInPlace {
            try access.grant(app: app, item: item, write: true, persistent: true, source: .open, session: nil)
            return item.path
        }
        let inbox = try ResolvedItem.resolve(container.inboxURL.path)
        let name = (AvailableName.path(for: (item.path as NSString).lastPathComponent, in: inbox.path) as NSString).lastPathComponent
        return try item.copy(into: inbox, named: name).path
    }

    /// The type of a document resolved once: by its name, and by its bytes read through its
    /// descriptor when the name says nothing.
    private static func type(of item: ResolvedItem) -> UTType {
        UTType.contentType(named: URL(fileURLWithPath: item.path), status: item.status, reading: FilePath(item.descriptorPath)).type
    }

    /// The handler registry over the daemon's types, with the user's choices; apps registered
    /// since the daemon started are added to the types first.
    private static func handlerRegistry(_ state: WebState) -> HandlerRegistry {
        let types = state.context.types
        let known = Set(types.apps.map(\.bundleIdentifier))
        let catalog = state.context.access.catalog
        for identifier in catalog.identifiers() where !known.contains(identifier) {
            if let manifest = catalog.manifest(identifier) { try? types.register(manifest) }
        }
        return HandlerRegistry(types: types, paths: state.paths)
    }
}

struct HandlerEntry: Encodable, Sendable {
    var app: String
    var name: String
    /// A desktop application (`name.desktop`): it opens documents, and its default is the
    /// desktop's (`mimeapps.list`), not Folio's to set.
    var desktop = false
}

struct Handlers: Encodable, Sendable {
    var type: String
    var typeName: String
    var handlers: [HandlerEntry]
    var defaultHandler: HandlerEntry?
}

struct OpenIn: Decodable {
    var path: String
    /// The app; nil: the type's default.
    var app: String?
}
