import Folio
import FolioSystem
import Foundation
import Hummingbird

extension WebRoutes {
    /// Changes: each path resolved once and checked against the scope (``WebScope``), then carried
    /// out on what it resolved to, through descriptors, inside a coordination as the
    /// daemon's own client (so apps presenting the items hear of it), on the slow pool (a claim may
    /// wait for a presenter). The answer comes once the index holds the change, so the page's next
    /// listing shows it.
    static func addActionRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.post("rename") { request, _ in
            await answer {
                let change = try await body(Rename.self, of: request)
                try WebScope.checkName(change.name)
                let scope = await state.scope()
                try await state.blocking(.slow) {
                    let (folder, item) = try scope.changeable(change.path)
                    _ = try state.files.move(item, into: folder, named: change.name)
                }
                // Named as the page named it (its folder may be reached through a link).
                let renamed = (change.path as NSString).deletingLastPathComponent + "/" + change.name
                return try await changed(["path": renamed], state: state)
            }
        }

        api.post("move") { request, _ in
            await answer {
                let change = try await body(Move.self, of: request)
                guard !change.paths.isEmpty, change.paths.count <= 1000 else { throw WebScope.Refusal(status: 400, message: "move 1 to 1,000 items") }
                let scope = await state.scope()
                let moved = try await state.blocking(.slow) {
                    let folder = try scope.folder(change.to)
                    var moved: [String] = []
                    for path in change.paths {
                        let (_, item) = try scope.changeable(path)
                        guard !CoordinationPath.isSelfOrDescendant(folder.path, of: item.path) else {
                            throw WebScope.Refusal(status: 400, message: "\(path) cannot go inside itself")
                        }
                        let name = (item.path as NSString).lastPathComponent
                        _ = try state.files.move(item, into: folder, named: name)
                        moved.append(change.to + "/" + name)
                    }
                    return moved
                }
                return try await changed(["paths": moved], state: state)
            }
        }

        api.post("duplicate") { request, _ in
            await answer {
                let change = try await body(ItemPath.self, of: request)
                let scope = await state.scope()
                let copy = try await state.blocking(.slow) {
                    // The entry itself, beside itself: a link is duplicated as a link, and only
                    // when what it leads to is in reach too.
                    let (folder, item) = try scope.entry(change.path)
                    if item.status.kind == .symbolicLink { _ = try scope.item(change.path) }
                    let name = (item.path as NSString).lastPathComponent
                    let stem = (name as NSString).deletingPathExtension, suffix = (name as NSString).pathExtension
                    let copy = try state.files.copy(item, into: folder, named: stem + " copy" + (suffix.isEmpty ? "" : "." + suffix))
                    return (change.path as NSString).deletingLastPathComponent + "/" + (copy.path as NSString).lastPathComponent
                }
                return try await changed(["path": copy], state: state)
            }
        }

        api.post("folder") { request, _ in
            await answer {
                let change = try await body(NewFolder.self, of: request)
                try WebScope.checkName(change.name)
                let scope = await state.scope()
                let made = try await state.blocking(.slow) {
                    _ = try state.files.makeFolder(named: change.name, in: try scope.folder(change.parent))
                    return change.parent + "/" + change.name
                }
                return try await changed(["path": made], state: state)
            }
        }

        api.post("trash") { request, _ in
            await answer {
                let change = try await body(ItemPaths.self, of: request)
                guard !change.paths.isEmpty, change.paths.count <= 1000 else { throw WebScope.Refusal(status: 400, message: "trash 1 to 1,000 items") }
                let scope = await state.scope()
                let names = try await state.blocking(.slow) {
                    var names: [String] = []
                    for path in change.paths {
                        let (_, item) = try scope.changeable(path)
                        guard !CoordinationPath.isSelfOrDescendant(state.trash.directory, of: item.path) else {
                            throw WebScope.Refusal(status: 400, message: "\(path) cannot be trashed")
                        }
                        names.append(try state.trash.trash(item).name)
                    }
                    return names
                }
                return try await changed(["names": names], state: state)
            }
        }

        api.post("restore") { request, _ in
            await answer {
                let change = try await body(TrashName.self, of: request)
                let scope = await state.scope()
                let restored = try await state.blocking(.slow) {
                    let item = try state.trash.item(named: change.name)
                    try WebScope.checkForm(item.originalPath)
                    let folder = try scope.folder(CoordinationPath.ancestors(of: item.originalPath).first ?? "/")
                    try state.trash.restore(item, into: folder)
                    return item.originalPath
                }
                return try await changed(["path": restored], state: state)
            }
        }

        api.post("tags") { request, _ in
            await answer {
                let change = try await body(SetTags.self, of: request)
                guard change.tags.count <= 50 else { throw WebScope.Refusal(status: 400, message: "at most 50 tags") }
                for tag in change.tags { try checkTag(tag) }
                let scope = await state.scope()
                try await state.blocking(.slow) {
                    try state.files.setTags(change.tags, of: try scope.item(change.path))
                }
                return try await changed(["path": change.path], state: state)
            }
        }

        api.post("favorite") { request, _ in
            await answer {
                let change = try await body(SetFavorite.self, of: request)
                let scope = await state.scope()
                _ = try await state.blocking(.quick) { try scope.item(change.path) }
                try await state.context.index.perform { index in
                    if change.favorite {
                        try index.addFavorite(change.path)
                    } else {
                        _ = try index.removeFavorite(change.path)
                    }
                }
                return WebJSON.response(["path": change.path])
            }
        }
    }

    /// The answer to a change, once the index applied what it stitched.
    static func changed(_ value: some Encodable & Sendable, state: WebState) async throws -> Response {
        try await state.context.index.perform { $0.applyStitched() }
        return WebJSON.response(value)
    }
}

struct Rename: Decodable {
    var path: String
    var name: String
}

struct Move: Decodable {
    var paths: [String]
    var to: String
}

struct ItemPath: Decodable {
    var path: String
}

struct ItemPaths: Decodable {
    var paths: [String]
}

struct NewFolder: Decodable {
    var parent: String
    var name: String
}

struct TrashName: Decodable {
    var name: String
}

struct SetTags: Decodable {
    var path: String
    var tags: [String]
}

struct SetFavorite: Decodable {
    var path: String
    var favorite: Bool
}
