import Folio
import FolioSystem
import Foundation
import Hummingbird

extension WebRoutes {
    /// Changes: each checked against the scope, then carried out inside a coordination as the
    /// daemon's own client (so apps presenting the items hear of it), on the slow pool (a claim may
    /// wait for a presenter). The answer comes once the index holds the change, so the page's next
    /// listing shows it.
    static func addActionRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.post("rename") { request, _ in
            await answer {
                let change = try await body(Rename.self, of: request)
                try WebScope.checkName(change.name)
                let scope = await state.scope()
                let target = (change.path as NSString).deletingLastPathComponent + "/" + change.name
                try await state.blocking(.slow) {
                    try scope.changeable(change.path)
                    try scope.inside(parentOf: target)
                    try state.files.move(change.path, to: target)
                }
                return try await changed(["path": target], state: state)
            }
        }

        api.post("move") { request, _ in
            await answer {
                let change = try await body(Move.self, of: request)
                guard !change.paths.isEmpty, change.paths.count <= 1000 else { throw WebScope.Refusal(status: 400, message: "move 1 to 1,000 items") }
                let scope = await state.scope()
                let moved = try await state.blocking(.slow) {
                    try scope.folder(change.to)
                    var moved: [String] = []
                    for path in change.paths {
                        try scope.changeable(path)
                        guard !CoordinationPath.isSelfOrDescendant(change.to, of: path) else {
                            throw WebScope.Refusal(status: 400, message: "\(path) cannot go inside itself")
                        }
                        let target = change.to + "/" + (path as NSString).lastPathComponent
                        try state.files.move(path, to: target)
                        moved.append(target)
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
                    try scope.existing(change.path)
                    let name = (change.path as NSString).lastPathComponent
                    let stem = (name as NSString).deletingPathExtension, suffix = (name as NSString).pathExtension
                    let target = AvailableName.path(
                        for: stem + " copy" + (suffix.isEmpty ? "" : "." + suffix), in: (change.path as NSString).deletingLastPathComponent)
                    try state.files.copy(change.path, to: target)
                    return target
                }
                return try await changed(["path": copy], state: state)
            }
        }

        api.post("folder") { request, _ in
            await answer {
                let change = try await body(NewFolder.self, of: request)
                try WebScope.checkName(change.name)
                let scope = await state.scope()
                let path = change.parent + "/" + change.name
                try await state.blocking(.slow) {
                    try scope.folder(change.parent)
                    try state.files.makeFolder(path)
                }
                return try await changed(["path": path], state: state)
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
                        try scope.changeable(path)
                        guard !CoordinationPath.isSelfOrDescendant(state.trash.directory, of: path) else {
                            throw WebScope.Refusal(status: 400, message: "\(path) cannot be trashed")
                        }
                        names.append(try state.trash.trash(path).name)
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
                    try scope.inside(parentOf: item.originalPath)
                    try state.trash.restore(item)
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
                    try scope.existing(change.path)
                    try state.files.setTags(change.tags, of: change.path)
                }
                return try await changed(["path": change.path], state: state)
            }
        }

        api.post("favorite") { request, _ in
            await answer {
                let change = try await body(SetFavorite.self, of: request)
                let scope = await state.scope()
                _ = try await state.blocking(.quick) { try scope.existing(change.path) }
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
