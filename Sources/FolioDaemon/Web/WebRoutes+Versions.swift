import Folio
import FolioSystem
import Foundation
import Hummingbird
import SystemPackage
import UniformTypes

extension WebRoutes {
    /// Versions and conflicts: every version kept of a document (with its text, for a text
    /// document, so the page can show a diff), restoring one, the documents in conflict, and
    /// resolving a conflict by keeping one version or both.
    static func addVersionRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("versions") { request, _ in
            await answer {
                let path = try parameter("path", of: request)
                let scope = await state.scope()
                let listing = try await state.blocking(.slow) {
                    let item = try scope.item(path)
                    let status = item.status
                    guard status.kind == .regular else { throw WebScope.Refusal(status: 400, message: "only a document has versions: \(path)") }
                    let textual = UTType(filenameExtension: (item.path as NSString).pathExtension)?.conforms(to: .text) ?? false
                    let versions = try state.files.versions(of: item).map { version in
                        VersionEntry(
                            id: version.identifier, kind: version.kindName, modified: version.modificationDate?.timeIntervalSince1970,
                            conflict: version.isConflict, resolved: version.isResolved, computer: version.localizedNameOfSavingComputer,
                            size: (try? FileStatus(path: FilePath(version.url.path)))?.size ?? 0, text: textual ? Self.text(at: version.url.path) : nil)
                    }
                    let current = VersionEntry(
                        id: "current", kind: "current", modified: status.modificationTime, conflict: false, resolved: false, computer: nil,
                        size: status.size, text: textual ? Self.text(of: item) : nil)
                    return VersionListing(path: path, textual: textual, current: current, versions: versions.filter { $0.kind != "current" })
                }
                return WebJSON.response(listing)
            }
        }

        api.post("versions/restore") { request, _ in
            await answer {
                let change = try await body(RestoreVersion.self, of: request)
                let scope = await state.scope()
                try await state.blocking(.slow) {
                    let (folder, item) = try scope.document(change.path)
                    try state.files.restore(change.id, of: item, in: folder)
                }
                return try await changed(["path": change.path], state: state)
            }
        }

        api.get("conflicts") { _, _ in
            await answer {
                let scope = await state.scope()
                let types = state.context.index.writer.types
                let records = try await state.blocking(.slow) {
                    VersionStore.current.documentsWithUnresolvedConflicts().compactMap { path -> IndexRecord? in
                        guard let item = try? scope.item(path) else { return nil }
                        var record = IndexRecord(path: path, name: (path as NSString).lastPathComponent, status: item.status, types: types)
                        record.conflict = true
                        return record
                    }
                }
                return WebJSON.response(Items(items: records.map(WebItem.init)))
            }
        }

        api.post("conflicts/resolve") { request, _ in
            await answer {
                let change = try await body(ResolveConflict.self, of: request)
                let scope = await state.scope()
                let kept = try await state.blocking(.slow) {
                    let (folder, item) = try scope.document(change.path)
                    return try state.files.resolveConflicts(of: item, in: folder, keep: change.keep, keepBoth: change.both ?? false)
                }
                return try await changed(["kept": kept], state: state)
            }
        }
    }

    /// The text of a document of at most 512 KiB in UTF-8, or nil.
    static func text(at path: String) -> String? {
        guard let status = try? FileStatus(path: FilePath(path)), status.size <= 512 << 10 else { return nil }
        return (try? FilePath(path).readBytes(maximumSize: 512 << 10)).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The text of a document resolved once, read through its descriptor: at most 512 KiB in
    /// UTF-8, or nil.
    static func text(of item: ResolvedItem) -> String? {
        guard item.status.size <= 512 << 10 else { return nil }
        return text(at: item.descriptorPath)
    }
}

struct VersionEntry: Encodable, Sendable {
    var id: String
    var kind: String
    var modified: Double?
    var conflict: Bool
    var resolved: Bool
    var computer: String?
    var size: Int64
    var text: String?
}

struct VersionListing: Encodable, Sendable {
    var path: String
    var textual: Bool
    /// The document as it is now.
    var current: VersionEntry
    /// The versions kept, oldest first.
    var versions: [VersionEntry]
}

struct RestoreVersion: Decodable {
    var path: String
    var id: String
}

struct ResolveConflict: Decodable {
    var path: String
    /// The version whose contents win; nil keeps the current contents.
    var keep: String?
    /// Also keep each losing version under a name of its own.
    var both: Bool?
}

extension WebRoutes {
    /// `GET /api/thumbnail?path=`: the freedesktop thumbnail of an image or PDF (made by the
    /// machine's thumbnailers, sandboxed, when the cache has none newer than the file), as PNG.
    static func addThumbnailRoute(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("thumbnail") { request, _ in
            await answer {
                let path = try parameter("path", of: request)
                let scope = await state.scope()
                let png = try await state.blocking(.slow) { () throws -> Data? in
                    let item = try scope.item(path)
                    guard item.status.kind == .regular, let type = UTType(filenameExtension: (item.path as NSString).pathExtension),
                        type.conforms(to: .image) || type.conforms(to: .pdf)
                    else { return nil }
                    return Thumbnails.current(for: URL(fileURLWithPath: item.path), modified: item.status.modificationTime)
                }
                guard let png else { throw WebScope.Refusal(status: 404, message: "no thumbnail of \(path)") }
                return Response(status: .ok, headers: [.contentType: "image/png"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: png)))
            }
        }
    }
}
