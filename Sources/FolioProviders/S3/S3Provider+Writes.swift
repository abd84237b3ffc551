public import Folio
public import Foundation
import NIOCore

extension S3Provider {
    public func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, contents: URL?, options: FileProviderCreateItemOptions,
        request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        try await createItem(basedOn: template, fields: fields, uploading: contents.map { .file($0) }, options: options, request: request)
    }

    package func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, uploading contents: UploadContents?, options: FileProviderCreateItemOptions,
        request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        try FileProviderFilename.validate(template.filename)
        guard !template.filename.hasPrefix(Self.temporaryPrefix) else {
            throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSLocalizedDescriptionKey: "names starting with \(Self.temporaryPrefix) are the provider's"])
        }
        let parent = try await folderPath(template.parentItemIdentifier)
        let isFolder = template.contentType.isFolder
        let target = parent + template.filename + (isFolder ? "/" : "")
        await lock(parent + template.filename)
        defer { unlock(parent + template.filename) }
        if let existing = try await sameName(parent + template.filename) {
            if options.contains(.mayAlreadyExist), existing.isFolder, isFolder { return FileProviderItemResult(item: existing) }
            throw FileProviderError.collision(with: existing.itemIdentifier, message: "“\(template.filename)” exists in its folder")
        }
        let item = try await put(target, from: isFolder ? nil : contents, condition: ("If-None-Match", "*"))
        remember(item)
        return FileProviderItemResult(item: item)
    }

    public func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, contents: URL?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        try await modifyItem(item, baseVersion: baseVersion, changedFields: changedFields, uploading: contents.map { .file($0) }, options: options, request: request)
    }

    package func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, uploading contents: UploadContents?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        let relative = Self.relative(item.itemIdentifier)
        guard !relative.isEmpty || changedFields.isDisjoint(with: [.filename, .parentItemIdentifier, .contents]) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "the root cannot be renamed, moved or written"])
        }
        let name = relative.hasSuffix("/") ? String(relative.dropLast()) : relative
        await lock(name)
        defer { unlock(name) }
        var current = try await current(relative)
        if changedFields.contains(.contents), !current.isFolder {
            let base = String(decoding: baseVersion.contentVersion, as: UTF8.self)
            if baseVersion.contentVersion.isEmpty || options.contains(.mayAlreadyExist) {
                current = try await put(relative, from: contents, condition: nil)
            } else {
                guard ETag.isServerTag(base) else {
                    throw FileProviderError(.localVersionConflictingWithServer, message: "\(relative): the base version is not one of the server's")
                }
                var size: Int64 = 0
                switch contents {
                case .file(let url): size = (try? await HTTPTransfer.size(of: url.path)) ?? 0
                case .bytes(let bytes): size = Int64(bytes.count)
                case nil: break
                }
                if !(try await conditionsHonoured()) || size >= multipartThreshold {
                    // Servers ignoring If-Match, and multipart completions on servers that may ignore it.
                    try await checkBase(relative, base)
                }
                current = try await put(relative, from: contents, condition: ("If-Match", "\"\(base)\""))
            }
            remember(current)
        }
        if changedFields.contains(.filename) || changedFields.contains(.parentItemIdentifier) {
            let newName = changedFields.contains(.filename) ? item.filename : current.filename
            try FileProviderFilename.validate(newName)
            let parent = try await folderPath(changedFields.contains(.parentItemIdentifier) ? item.parentItemIdentifier : current.parentItemIdentifier)
            let destination = parent + newName + (current.isFolder ? "/" : "")
            if current.isFolder, destination.hasPrefix(relative) {
                throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSLocalizedDescriptionKey: "a folder cannot move into itself"])
            }
            if !destination.utf8.elementsEqual(relative.utf8) {
                if let existing = try await sameName(parent + newName) {
                    throw FileProviderError.collision(with: existing.itemIdentifier, message: "“\(newName)” exists in its folder")
                }
                current = current.isFolder ? try await moveFolder(relative, to: destination) : try await moveFile(current, to: destination)
                remember(nil, removed: [Self.identifier(relative)])
                remember(current)
            }
        }
        return FileProviderItemResult(item: current)
    }

    public func deleteItem(
        identifier: FileProviderItemIdentifier, baseVersion: FileProviderItemVersion, options: FileProviderDeleteItemOptions,
        request: FileProviderRequest
    ) async throws {
        guard identifier != .rootContainer else { throw FileProviderError(.deletionRejected, message: "the root cannot be deleted") }
        let relative = Self.relative(identifier)
        let name = relative.hasSuffix("/") ? String(relative.dropLast()) : relative
        await lock(name)
        defer { unlock(name) }
        guard try await existing(relative) != nil else { return }
        if relative.hasSuffix("/") {
            let keys = try await s3.listAll(prefix: prefix + relative).objects.map(\.key)
            if !options.contains(.recursive), keys.contains(where: { $0 != prefix + relative }) {
                throw FileProviderError(.directoryNotEmpty, message: "“\(relative.dropLast())” is not empty")
            }
            // Deepest first, the folder's own marker last: a failure leaves the folder listed.
            for key in keys.sorted(by: { $0.utf8.count > $1.utf8.count }) { try await deleteKey(key, condition: nil) }
        } else if baseVersion.contentVersion.isEmpty {
            try await deleteKey(prefix + relative, condition: nil)
        } else {
            let base = String(decoding: baseVersion.contentVersion, as: UTF8.self)
            let usable = ETag.isServerTag(base)
            let honoured = try await conditionsHonoured()
            if !usable || !honoured {
                try await checkBase(relative, base)
                try await deleteKey(prefix + relative, condition: nil)
            } else {
                try await deleteKey(prefix + relative, condition: base)
            }
        }
        remember(nil, removed: [identifier])
    }

    // MARK: Helpers

    /// The key path (relative, "" or ending in `/`) of the folder `identifier`, which must exist.
    func folderPath(_ identifier: FileProviderItemIdentifier) async throws -> String {
        let relative = Self.relative(identifier)
        guard relative.isEmpty || relative.hasSuffix("/") else { throw FileProviderError(.noSuchItem, message: "\(identifier) is not a folder") }
        if !relative.isEmpty { _ = try await current(relative) }
        return relative
    }

    /// The file or folder named `path` (a relative path without a trailing `/`), if either exists.
    func sameName(_ path: String) async throws -> FileProviderItemRecord? {
        if let file = try await existing(path) { return file }
        return try await existing(path + "/")
    }

    /// Requires the object's ETag to still be `base`.
    func checkBase(_ relative: String, _ base: String) async throws {
        let now = try await current(relative)
        guard String(decoding: now.itemVersion.contentVersion, as: UTF8.self) == base else {
            throw FileProviderError(.localVersionConflictingWithServer, message: "\(relative) changed since the base version")
        }
    }

    /// PUTs `contents` (nothing for a folder marker) to `relative` with `condition`, in parts when
    /// large; returns the item as written.
    func put(_ relative: String, from contents: UploadContents?, condition: (String, String)?) async throws -> FileProviderItemRecord {
        let headers = condition.map { [$0] } ?? []
        let reply: S3Client.Reply
        var size: Int64 = 0
        if let contents {
            // Read once: its size chooses one request or parts, and a small file's bytes are the body.
            let (body, read, bytes) = try await FileChunks.body(of: contents)
            size = read
            if size >= Int64(multipartThreshold), case .file(let file) = contents {
                reply = try await s3.uploadInParts(prefix + relative, from: file, partSize: partSize, concurrency: concurrency, headers: headers)
            } else {
                reply = try await s3.upload(prefix + relative, from: (contents, body, bytes), headers: headers)
            }
        } else {
            reply = try await s3.upload(prefix + relative, from: nil, headers: headers)
        }
        switch reply.status {
        case 200..<300: break
        case 412 where condition?.0 == "If-None-Match":
            throw FileProviderError.collision(with: Self.identifier(relative), message: "“\(relative)” exists")
        default:
            throw S3Client.statusError(reply.status, reply.body, "PUT", relative)
        }
        // A multipart completion names its ETag in the body.
        let etag = reply.header("ETag") ?? (try? S3ResultField.parse(reply.body, field: "ETag"))?.value
        guard etag != nil else { return try await current(relative) }
        return record(relative, etag: etag, size: size, modified: Date())
    }

    /// Deletes `key`, with `If-Match: condition` when given; a key already gone is fine.
    func deleteKey(_ key: String, condition: String?) async throws {
        let reply = try await s3.send("DELETE", key, headers: condition.map { [("If-Match", "\"\($0)\"")] } ?? [])
        guard (200..<300).contains(reply.status) || reply.status == 404 else { throw S3Client.statusError(reply.status, reply.body, "DELETE", key) }
    }

    /// Copies `source` (a full key) to `destination` (a full key), only while the source's ETag is
    /// `etag` and the destination is free (on servers that honour the conditions); returns the copy's ETag.
    func copy(_ source: String, etag: String?, to destination: String) async throws -> String? {
        var headers = [("x-amz-copy-source", "/\(s3.bucket)/" + SigV4Signer.encode(source, keepingSlashes: true)), ("If-None-Match", "*")]
        if let etag { headers.append(("x-amz-copy-source-if-match", "\"\(etag)\"")) }
        let reply = try await s3.send("PUT", destination, headers: headers, timeout: .minutes(10))
        let result = try? S3ResultField.parse(reply.body, field: "ETag")
        guard reply.status == 200, result?.rootName == "CopyObjectResult" else {
            throw S3Client.statusError(reply.status == 200 ? 500 : reply.status, reply.body, "COPY", source)
        }
        return result?.value
    }

    /// Moves a file: copy, then delete the source while its ETag is still the one copied (else the
    /// copy is removed again and the move fails as a conflict).
    func moveFile(_ item: FileProviderItemRecord, to destination: String) async throws -> FileProviderItemRecord {
        let relative = Self.relative(item.itemIdentifier)
        let etag = String(decoding: item.itemVersion.contentVersion, as: UTF8.self)
        let conditional = ETag.isServerTag(etag)
        let copied = try await copy(prefix + relative, etag: conditional ? etag : nil, to: prefix + destination)
        do {
            let honoured = try await conditionsHonoured()
            try await deleteKey(prefix + relative, condition: conditional && honoured ? etag : nil)
        } catch {
            try? await deleteKey(prefix + destination, condition: copied.flatMap(ETag.opaque))
            throw error
        }
        return record(destination, etag: copied, size: item.size ?? 0, modified: item.contentModificationDate)
    }

    /// Moves a folder: every key below it is copied before any is deleted, so a failure part way
    /// leaves the source whole (and the copies made so far are removed again).
    func moveFolder(_ relative: String, to destination: String) async throws -> FileProviderItemRecord {
        let objects = try await s3.listAll(prefix: prefix + relative).objects
        var copied: [String] = []
        do {
            for object in objects {
                let target = prefix + destination + object.key.dropFirst(prefix.count + relative.count)
                if object.key.hasSuffix("/"), object.size == 0 {
                    // A folder marker has nothing to copy: a new one is put (some servers refuse to
                    // copy a marker, answering 404 to the copy of a key that HEAD finds).
                    _ = try await put(String(target.dropFirst(prefix.count)), from: nil, condition: ("If-None-Match", "*"))
                } else {
                    _ = try await copy(object.key, etag: ETag.opaque(object.etag), to: target)
                }
                copied.append(target)
            }
            if !objects.contains(where: { $0.key == prefix + relative }) {
                _ = try await put(destination, from: nil, condition: ("If-None-Match", "*"))
                copied.append(prefix + destination)
            }
        } catch {
            for key in copied { try? await deleteKey(key, condition: nil) }
            throw error
        }
        for object in objects.sorted(by: { $0.key.utf8.count > $1.key.utf8.count }) { try await deleteKey(object.key, condition: nil) }
        return folder(destination)
    }
}
