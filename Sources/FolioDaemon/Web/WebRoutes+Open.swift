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
                    // `folio open` prepares the document (a grant in place, or a copy in the Inbox)
                    // and starts the app; it runs on after this answer, reaped when it ends. It is
                    // given where the item really is, and resolves that beneath an app's container.
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                    process.arguments = ["open"] + (change.app.map { ["--app", $0] } ?? []) + ["--", item.path]
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
