import Folio
import FolioSystem
import Foundation
import Hummingbird
import SystemPackage
import UniformTypes

extension WebRoutes {
    /// Reads: the sidebar's places, a folder's page of items, search, recents, favorites, tags and
    /// the trash.
    static func addBrowseRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("places") { _, _ in
            await answer {
                let index = state.context.index
                let (roots, tags) = try await index.perform { index in (try index.roots(), try index.tagCounts()) }
                let catalog = state.context.access.catalog, drive = state.paths.driveDirectory
                // Apps whose ubiquity container is public (`NSUbiquitousContainerIsDocumentScopePublic`)
                // show its Documents folder, as the Files app does.
                let apps = try await state.blocking(.quick) {
                    catalog.identifiers().compactMap(catalog.manifest).flatMap { manifest in
                        manifest.ubiquitousContainers.filter(\.isDocumentScopePublic).compactMap { container -> Place? in
                            let documents = drive + "/" + container.identifier + "/Documents"
                            guard FileManager.default.fileExists(atPath: documents) else { return nil }
                            return Place(path: documents, name: container.name ?? manifest.name ?? manifest.bundleIdentifier)
                        }
                    }
                }
                let places = Places(
                    home: state.home, drive: drive, trash: state.trash.directory,
                    roots: roots.filter { $0.origin == "user" }.map { Place(path: $0.path, name: ($0.path as NSString).lastPathComponent) },
                    apps: apps, tags: tags.map { TagCount(name: $0.tag, count: $0.count) })
                return WebJSON.response(places)
            }
        }

        api.get("list") { request, _ in
            await answer {
                let path = try parameter("path", of: request)
                let order = MetadataIndex.ListingOrder(rawValue: request.uri.queryParameters.get("sort") ?? "name") ?? .name
                let descending = request.uri.queryParameters.get("desc") == "1"
                let hidden = request.uri.queryParameters.get("hidden") == "1"
                let offset = max(0, Int(request.uri.queryParameters.get("offset") ?? "") ?? 0)
                let limit = min(max(1, Int(request.uri.queryParameters.get("limit") ?? "") ?? 200), 1000)
                let scope = await state.scope()
                let folder = try await state.blocking(.quick) { try scope.folder(path) }
                let listing = try await listing(
                    of: path, folder: folder, order: order, descending: descending, hidden: hidden, offset: offset, limit: limit, state: state)
                // Documents in conflict carry a badge (the version store's manifests say which).
                let conflicts = try await state.blocking(.quick) { state.conflicts() }
                return WebJSON.response(
                    Listing(path: path, total: listing.total, offset: offset, items: items(listing.items, request: request, state: state, conflicts: conflicts), crumbs: crumbs(of: path, scope: scope)))
            }
        }

        api.get("search") { request, _ in
            await answer {
                let text = try parameter("q", of: request)
                guard !text.isEmpty, text.count <= 256 else { throw WebScope.Refusal(status: 400, message: "search for 1 to 256 characters") }
                let kind = request.uri.queryParameters.get("kind").flatMap(SearchKind.init(rawValue:))
                let since = request.uri.queryParameters.get("since").flatMap(Double.init)
                let limit = min(max(1, Int(request.uri.queryParameters.get("limit") ?? "") ?? 100), 500)
                let filtered = kind != nil || since != nil
                let hits = try await state.context.index.perform { index in
                    try index.search(text, content: true, folders: [], limit: filtered ? limit * 10 : limit, allowed: { _ in true })
                }
                let found = hits.filter { hit in
                    (since.map { hit.record.modified >= $0 } ?? true) && (kind?.matches(hit.record) ?? true)
                }.prefix(limit)
                var items = Self.items(found.map(\.record), request: request, state: state)
                for (index, hit) in found.enumerated() { items[index].snippet = hit.snippet }
                return WebJSON.response(Items(items: items))
            }
        }

        api.get("recents") { request, _ in
            await answer {
                let scope = await state.scope()
                let records = try await state.context.index.perform { index in
                    try index.recents(limit: 200).compactMap { recent -> IndexRecord? in
                        guard scope.contains(recent.path), var record = recent.record else { return nil }
                        record.lastUsed = recent.used
                        return record
                    }
                }
                return WebJSON.response(Items(items: items(Array(records.prefix(100)), request: request, state: state)))
            }
        }

        api.get("favorites") { request, _ in
            await answer {
                let records = try await state.context.index.perform { index in
                    try index.favorites().compactMap { try index.item(at: $0.path) }
                }
                return WebJSON.response(Items(items: items(records, request: request, state: state)))
            }
        }

        api.get("tagged") { request, _ in
            await answer {
                let tag = try parameter("tag", of: request)
                try checkTag(tag)
                let records = try await state.context.index.perform { index in try index.tagged(tag, limit: 1000) }
                return WebJSON.response(Items(items: items(records, request: request, state: state)))
            }
        }

        api.get("trash") { _, _ in
            await answer {
                let items = try await state.blocking(.quick) {
                    state.trash.items().map { item in
                        let status = try? FileStatus(path: FilePath(item.path))
                        return TrashEntry(
                            name: item.name, originalPath: item.originalPath, deleted: item.deletionDate?.timeIntervalSince1970,
                            folder: status?.kind == .directory, size: status?.kind == .regular ? status?.size ?? 0 : 0)
                    }
                }
                return WebJSON.response(TrashListing(items: items))
            }
        }
    }

    /// The page's items; with `picker=N`, each says whether it may answer that picker request.
    static func items(_ records: [IndexRecord], request: Request, state: WebState, conflicts: Set<String> = []) -> [WebItem] {
        let picking = request.uri.queryParameters.get("picker").flatMap(UInt64.init).flatMap(state.context.access.picker.pendingRequest)
        return records.map { record in
            var item = WebItem(record)
            if conflicts.contains(record.path) { item.conflict = true }
            if let picking { item.pickable = pickable(record, for: picking) }
            return item
        }
    }

    /// A page of the items of `folder` (named `path` by the page): from the index when it holds the
    /// folder listed, else read from disk (raw `readdir` and `lstat`) through the folder's
    /// descriptor — what was checked — and sorted here.
    static func listing(
        of path: String, folder: ResolvedItem, order: MetadataIndex.ListingOrder, descending: Bool, hidden: Bool, offset: Int, limit: Int,
        state: WebState
    ) async throws -> (total: Int, items: [IndexRecord]) {
        let index = state.context.index
        if let indexed = try await index.perform({ try $0.children(of: path, order: order, descending: descending, hidden: hidden, offset: offset, limit: limit) }) {
            return indexed
        }
        let driveRoot = state.paths.driveDirectory
        return try await state.blocking(.slow) {
            var entries: [DirectoryScanner.Entry] = []
            let listed = DirectoryScanner().list(path, reading: folder.descriptorPath, visit: { entries.append($0) }, skipped: { _, _ in })
            guard listed else { throw WebScope.Refusal(status: 403, message: "\(path) cannot be read") }
            state.changes.watch(path)
            var records = IndexRecord.records(of: entries, types: index.writer.types, driveRoot: driveRoot)
            if !hidden { records.removeAll { $0.name.hasPrefix(".") } }
            // In the drive, each item's state with the server (uploaded, pinned, its error), from the
            // drive's journal, as the index would give it.
            if CoordinationPath.isSelfOrDescendant(path, of: driveRoot), !records.isEmpty {
                let states = try index.driveStates(of: records)
                for position in records.indices { records[position].sync = states[position] }
            }
            records.sort { order.precedes($0, $1, descending: descending) }
            return (records.count, Array(records.dropFirst(offset).prefix(limit)))
        }
    }

    /// The folders from the scope's root down to `path`.
    static func crumbs(of path: String, scope: WebScope) -> [Place] {
        let chain = ([path] + CoordinationPath.ancestors(of: path)).reversed()
        let inside = chain.filter { folder in scope.roots.contains { CoordinationPath.isSelfOrDescendant(folder, of: $0) } }
        return inside.map { Place(path: $0, name: $0 == "/" ? "/" : ($0 as NSString).lastPathComponent) }
    }

    static func checkTag(_ tag: String) throws(WebScope.Refusal) {
        guard !tag.isEmpty, tag.count <= 100, !tag.contains("\n"), !tag.utf8.contains(0) else {
            throw WebScope.Refusal(status: 400, message: "a tag is 1 to 100 characters on one line")
        }
    }
}

/// The kinds search filters by.
enum SearchKind: String, Sendable {
    case folder, document, image, text, pdf, audio, movie

    func matches(_ record: IndexRecord) -> Bool {
        let type = record.kind == .directory ? nil : UTType(record.type)
        switch self {
        case .folder: return record.kind == .directory
        case .document: return type.map { !$0.conforms(to: .image) && !$0.conforms(to: .audiovisualContent) } ?? false
        case .image: return type?.conforms(to: .image) ?? false
        case .text: return type?.conforms(to: .text) ?? false
        case .pdf: return type?.conforms(to: .pdf) ?? false
        case .audio: return type?.conforms(to: .audio) ?? false
        case .movie: return type?.conforms(to: .movie) ?? false
        }
    }
}

struct Place: Encodable, Sendable {
    var path: String
    var name: String
}

struct TagCount: Encodable, Sendable {
    var name: String
    var count: Int
}

struct Places: Encodable, Sendable {
    var home: String?
    var drive: String
    var trash: String
    var roots: [Place]
    /// The public ubiquity containers of registered apps.
    var apps: [Place]
    var tags: [TagCount]
}

struct Listing: Encodable, Sendable {
    var path: String
    var total: Int
    var offset: Int
    var items: [WebItem]
    var crumbs: [Place]
}

struct Items: Encodable, Sendable {
    var items: [WebItem]
}

struct TrashEntry: Encodable, Sendable {
    var name: String
    var originalPath: String
    var deleted: Double?
    var folder: Bool
    var size: Int64
}

struct TrashListing: Encodable, Sendable {
    var items: [TrashEntry]
}
