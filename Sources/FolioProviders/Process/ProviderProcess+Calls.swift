#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Folio
import FolioSystem
public import Foundation
import SystemPackage

extension ProviderProcess {
    public func item(for identifier: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> any FileProviderItem {
        let result = try await call("item", ["identifier": .string(identifier.rawValue)])
        return try checked("item") { () throws(ProviderWireError) in try ProviderWire.item(result["item"]) }
    }

    public func enumerateItems(
        in container: FileProviderItemIdentifier, startingAt page: FileProviderPage, request: FileProviderRequest
    ) async throws -> FileProviderItemPage {
        guard page.rawValue.count <= FileProviderPage.maximumLength else {
            throw FileProviderError(.pageExpired, message: "the page is over \(FileProviderPage.maximumLength) bytes")
        }
        let result = try await call("enumerateItems", ["container": .string(container.rawValue), "page": ProviderWire.encode(page.rawValue)])
        return try checked("enumerateItems") { () throws(ProviderWireError) in
            FileProviderItemPage(items: try ProviderWire.items(result["items"], "items"), nextPage: try ProviderWire.page(result["nextPage"]))
        }
    }

    public func currentSyncAnchor(for container: FileProviderItemIdentifier, request: FileProviderRequest) async throws
        -> FileProviderSyncAnchor
    {
        let result = try await call("currentSyncAnchor", ["container": .string(container.rawValue)])
        return try checked("currentSyncAnchor") { () throws(ProviderWireError) in try ProviderWire.anchor(result["anchor"]) }
    }

    public func enumerateChanges(
        in container: FileProviderItemIdentifier, from anchor: FileProviderSyncAnchor, request: FileProviderRequest
    ) async throws -> FileProviderChangeBatch {
        guard anchor.rawValue.count <= FileProviderSyncAnchor.maximumLength else {
            throw FileProviderError(.syncAnchorExpired, message: "the anchor is over \(FileProviderSyncAnchor.maximumLength) bytes")
        }
        let result = try await call(
            "enumerateChanges", ["container": .string(container.rawValue), "anchor": ProviderWire.encode(anchor.rawValue)])
        return try checked("enumerateChanges") { () throws(ProviderWireError) in
            guard let deleted = result["deleted"]?.arrayValue, deleted.count <= ProviderWire.maximumItems else {
                throw ProviderWireError("deleted is not an array of at most \(ProviderWire.maximumItems)")
            }
            return FileProviderChangeBatch(
                updatedItems: try ProviderWire.items(result["updated"], "updated"),
                deletedItemIdentifiers: try deleted.map { value throws(ProviderWireError) in try ProviderWire.identifier(value, "deleted") },
                anchor: try ProviderWire.anchor(result["anchor"]), moreComing: result["moreComing"]?.boolValue ?? false)
        }
    }

    public func fetchContents(
        for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest, progress: Progress
    ) async throws -> (contents: URL, item: any FileProviderItem) {
        var params: [String: WireValue] = ["identifier": .string(identifier.rawValue)]
        if let version { params["version"] = ProviderWire.encode(version) }
        let result = try await call("fetchContents", .object(params), progress: progress, timeout: transferTimeout)
        let path = result["path"]?.stringValue ?? ""
        let item = try checked("fetchContents") { () throws(ProviderWireError) in try ProviderWire.item(result["item"]) }
        let file = try containedFile(path, "fetchContents")
        if Task.isCancelled {
            unlink(file)
            throw CocoaError(.userCancelled, userInfo: [NSLocalizedDescriptionKey: "the fetch was cancelled"])
        }
        return (URL(fileURLWithPath: file, isDirectory: false), item)
    }

    public func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, contents: URL?, options: FileProviderCreateItemOptions,
        request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        let result = try await call(
            "createItem",
            [
                "template": ProviderWire.encode(template), "fields": .int(Int64(fields.rawValue)), "contents": contents.map { .string($0.path) } ?? .null,
                "options": .int(Int64(options.rawValue)),
            ], timeout: contents == nil ? nil : transferTimeout)
        return try itemResult(result, "createItem")
    }

    public func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, contents: URL?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        let result = try await call(
            "modifyItem",
            [
                "item": ProviderWire.encode(item), "baseVersion": ProviderWire.encode(baseVersion), "changedFields": .int(Int64(changedFields.rawValue)),
                "contents": contents.map { .string($0.path) } ?? .null, "options": .int(Int64(options.rawValue)),
            ], timeout: contents == nil ? nil : transferTimeout)
        return try itemResult(result, "modifyItem")
    }

    public func deleteItem(
        identifier: FileProviderItemIdentifier, baseVersion: FileProviderItemVersion, options: FileProviderDeleteItemOptions,
        request: FileProviderRequest
    ) async throws {
        _ = try await call(
            "deleteItem",
            ["identifier": .string(identifier.rawValue), "baseVersion": ProviderWire.encode(baseVersion), "options": .int(Int64(options.rawValue))])
    }

    // MARK: Checking replies

    private func itemResult(_ result: WireValue, _ method: String) throws -> FileProviderItemResult {
        try checked(method) { () throws(ProviderWireError) in
            let item = result["item"].flatMap { $0 == .null ? nil : $0 }
            return FileProviderItemResult(
                item: try item.map { value throws(ProviderWireError) in try ProviderWire.item(value) },
                stillPendingFields: FileProviderItemFields(rawValue: try ProviderWire.bits(result["pendingFields"], "pendingFields")),
                shouldFetchContent: result["shouldFetchContent"]?.boolValue ?? false)
        }
    }

    /// Runs a decoding step, turning a rule broken into the provider's malformed-reply error.
    private func checked<T>(_ method: String, _ body: () throws(ProviderWireError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw FileProviderError(
                .cannotSynchronize, message: "the provider “\(domain.displayName)” (\(executable.path)) sent a malformed reply to \(method): \(error)")
        }
    }

    /// The path of a regular file the provider wrote directly in the temporary directory; anything
    /// else (a path outside it or in a subfolder, a link, a folder) is refused and left alone.
    private func containedFile(_ path: String, _ method: String) throws -> String {
        let folder = CoordinationPath.normalize(temporaryDirectory.path)
        let normalized = CoordinationPath.normalize(path)
        let name = normalized.hasPrefix(folder + "/") ? String(normalized.dropFirst(folder.utf8.count + 1)) : ""
        let file = folder + "/" + name
        guard !name.isEmpty, !name.contains("/"), (try? FileStatus(path: FilePath(file)))?.kind == .regular else {
            throw FileProviderError(
                .cannotSynchronize,
                message: "the provider “\(domain.displayName)” (\(executable.path)) returned \(path.debugDescription) from \(method), "
                    + "which is not a file directly in its temporary directory")
        }
        return file
    }
}
