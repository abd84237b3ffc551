public import Folio
public import Foundation

extension WebDAVProvider {
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
        let parent = Self.relative(template.parentItemIdentifier)
        let target = parent.isEmpty ? template.filename : parent + "/" + template.filename
        if !template.contentType.isFolder, try await conditionsHonoured() {
            // One request: If-None-Match refuses an existing name, and a missing parent is a 409.
            await lock(target)
            defer { unlock(target) }
            let reply = try await dav.upload(target, from: contents, headers: [("If-None-Match", "*")])
            switch reply.status {
            case 200..<300: break
            case 412:
                let existing = try? await existing(target)
                throw FileProviderError.collision(with: existing?.itemIdentifier ?? Self.identifier(target), message: "“\(template.filename)” exists in its folder")
            case 405:
                // Some servers refuse a PUT over a folder with 405: a collision only if something is there.
                if let existing = try await existing(target) {
                    throw FileProviderError.collision(with: existing.itemIdentifier, message: "“\(template.filename)” exists in its folder")
                }
                throw dav.statusError(reply.status, "PUT", target, body: reply.body)
            default: throw dav.statusError(reply.status, "PUT", target, body: reply.body)
            }
            var item = try await written(target, size: reply.sent, reply: reply, request: request)
            if fields.contains(.fileSystemFlags), template.fileSystemFlags.contains(.userExecutable), await setExecutable(target, true) {
                item.fileSystemFlags.insert(.userExecutable)
            }
            remember(item)
            return FileProviderItemResult(item: item)
        }
        await lock(target)
        defer { unlock(target) }
        // Why the name cannot be taken: the parent is no folder, or something has the name (the
        // folder asked for, with `mayAlreadyExist`, is returned).
        func refusal() async throws -> FileProviderItemResult? {
            if !parent.isEmpty, try await current(parent).isFolder == false {
                throw FileProviderError(.noSuchItem, message: "\(template.parentItemIdentifier) is not a folder")
            }
            if let existing = try await existing(target) {
                if options.contains(.mayAlreadyExist), existing.isFolder, template.contentType.isFolder { return FileProviderItemResult(item: existing) }
                throw FileProviderError.collision(with: existing.itemIdentifier, message: "“\(template.filename)” exists in its folder")
            }
            return nil
        }
        if template.contentType.isFolder {
            // MKCOL first: it refuses a name taken (405) or a missing parent (409) by itself, so the
            // name and the parent are looked up only when it refused.
            let reply = try await dav.send("MKCOL", target)
            if !(200..<300).contains(reply.status) {
                if let existing = try await refusal() { return existing }
                if reply.status == 405 { throw FileProviderError.collision(with: Self.identifier(target)) }
                throw dav.statusError(reply.status, "MKCOL", target, body: reply.body)
            }
        } else {
            if let existing = try await refusal() { return existing }
            try await uploadThroughTemporary(target, from: contents, parent: parent, overwrite: false)
            if fields.contains(.fileSystemFlags), template.fileSystemFlags.contains(.userExecutable) { _ = await setExecutable(target, true) }
        }
        let item = try await current(target)
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
        var relative = Self.relative(item.itemIdentifier)
        guard !relative.isEmpty || changedFields.isDisjoint(with: [.filename, .parentItemIdentifier, .contents]) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "the root cannot be renamed, moved or written"])
        }
        await lock(relative)
        defer { unlock(relative) }
        // A new content alone, conditional on its base, needs nothing from the server first: the
        // If-Match refuses an item changed, gone or replaced since.
        let base = String(decoding: baseVersion.contentVersion, as: UTF8.self)
        var current = FileProviderItemRecord(item)
        let contentAlone =
            changedFields == [.contents] && !current.isFolder && !options.contains(.mayAlreadyExist) && !base.isEmpty && ETag.isServerTag(base)
        let trusted = contentAlone ? try await conditionsHonoured() : false
        if !trusted { current = try await self.current(relative) }
        if changedFields.contains(.contents), !current.isFolder {
            // The reply of a PUT to the file itself, which may name the new tag.
            var reply: WebDAVClient.Reply?
            if baseVersion.contentVersion.isEmpty || options.contains(.mayAlreadyExist) {
                let sent = try await dav.upload(relative, from: contents, headers: [])
                guard (200..<300).contains(sent.status) else { throw dav.statusError(sent.status, "PUT", relative, body: sent.body) }
                reply = sent
            } else if ETag.isServerTag(base), try await conditionsHonoured() {
                reply = try await conditionally("PUT", relative, base: base) { headers in try await self.dav.upload(relative, from: contents, headers: headers) }
            } else {
                try await checkBase(relative, base)
                try await uploadThroughTemporary(relative, from: contents, parent: Self.folder(of: relative), overwrite: true, base: base)
            }
            if let reply {
                // A PUT keeps the server's executable bit.
                let flags = current.fileSystemFlags
                current = try await written(relative, size: reply.sent, reply: reply, request: request)
                current.fileSystemFlags = flags
            } else {
                current = try await self.current(relative)
            }
            // Set or cleared when the file as written differs (a PUT keeps Apache's bit; a write
            // through a temporary name and a MOVE does not).
            let wanted = item.fileSystemFlags.contains(.userExecutable)
            if changedFields.contains(.fileSystemFlags), wanted != current.fileSystemFlags.contains(.userExecutable),
                await setExecutable(relative, wanted)
            {
                if wanted { current.fileSystemFlags.insert(.userExecutable) } else { current.fileSystemFlags.remove(.userExecutable) }
            }
            remember(current)
        }
        if changedFields.contains(.filename) || changedFields.contains(.parentItemIdentifier) {
            let name = changedFields.contains(.filename) ? item.filename : current.filename
            try FileProviderFilename.validate(name)
            let parent = changedFields.contains(.parentItemIdentifier) ? Self.relative(item.parentItemIdentifier) : Self.relative(current.parentItemIdentifier)
            if !parent.isEmpty, try await self.current(parent).isFolder == false {
                throw FileProviderError(.noSuchItem, message: "\(item.parentItemIdentifier) is not a folder")
            }
            let destination = parent.isEmpty ? name : parent + "/" + name
            if current.isFolder, (destination + "/").hasPrefix(relative + "/") {
                throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSLocalizedDescriptionKey: "a folder cannot move into itself"])
            }
            if !destination.utf8.elementsEqual(relative.utf8) {
                if let existing = try await existing(destination) {
                    throw FileProviderError.collision(with: existing.itemIdentifier, message: "“\(name)” exists in its folder")
                }
                // A collection is named with its trailing slash, source and destination (RFC 4918).
                let slash = current.isFolder ? "/" : ""
                let reply = try await dav.send("MOVE", relative + slash, headers: [("Destination", dav.url(destination + slash)), ("Overwrite", "F")])
                switch reply.status {
                case 200..<300: break
                case 412: throw FileProviderError.collision(with: Self.identifier(destination))
                default: throw dav.statusError(reply.status, "MOVE", relative, body: reply.body)
                }
                remember(nil, removed: [Self.identifier(relative)])
                relative = destination
                current = try await self.current(relative)
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
        await lock(relative)
        defer { unlock(relative) }
        guard let current = try await existing(relative) else { return }
        if current.isFolder {
            if !options.contains(.recursive), !(try await children(relative)).isEmpty {
                throw FileProviderError(.directoryNotEmpty, message: "“\(current.filename)” is not empty")
            }
            let reply = try await dav.send("DELETE", relative + "/")
            guard (200..<300).contains(reply.status) || reply.status == 404 else { throw dav.statusError(reply.status, "DELETE", relative, body: reply.body) }
        } else if baseVersion.contentVersion.isEmpty {
            let reply = try await dav.send("DELETE", relative)
            guard (200..<300).contains(reply.status) || reply.status == 404 else { throw dav.statusError(reply.status, "DELETE", relative, body: reply.body) }
        } else {
            let base = String(decoding: baseVersion.contentVersion, as: UTF8.self)
            if ETag.isServerTag(base), try await conditionsHonoured() {
                try await conditionally("DELETE", relative, base: base) { headers in try await self.dav.send("DELETE", relative, headers: headers) }
            } else {
                try await checkBase(relative, base)
                let reply = try await dav.send("DELETE", relative)
                guard (200..<300).contains(reply.status) || reply.status == 404 else { throw dav.statusError(reply.status, "DELETE", relative, body: reply.body) }
            }
        }
        remember(nil, removed: [identifier])
    }

    // MARK: Helpers

    /// The item at `relative`, or nil when there is none (other errors are thrown).
    func existing(_ relative: String) async throws -> FileProviderItemRecord? {
        do {
            return try await current(relative)
        } catch let error as FileProviderError where error.code == .noSuchItem {
            return nil
        }
    }

    /// Requires the item's ETag to still be `base` (for servers that ignore If-Match).
    func checkBase(_ relative: String, _ base: String) async throws {
        let now = try await current(relative)
        guard String(decoding: now.itemVersion.contentVersion, as: UTF8.self) == base else {
            throw FileProviderError(.localVersionConflictingWithServer, message: "/\(relative) changed since the base version")
        }
    }

    /// Sends a request with `If-Match: base`. A 412 while the server still has `base` is Apache's
    /// second of weak ETags after a write: the request is sent again a second later.
    @discardableResult
    func conditionally(_ method: String, _ relative: String, base: String, _ send: ([(String, String)]) async throws -> WebDAVClient.Reply)
        async throws -> WebDAVClient.Reply
    {
        for _ in 0..<4 {
            let reply = try await send([("If-Match", "\"\(base)\"")])
            if (200..<300).contains(reply.status) { return reply }
            if method == "DELETE", reply.status == 404 { return reply }
            guard reply.status == 412 else { throw dav.statusError(reply.status, method, relative, body: reply.body) }
            try await checkBase(relative, base)
            try await Task.sleep(for: .milliseconds(1100))
        }
        throw FileProviderError(.localVersionConflictingWithServer, message: "\(method) /\(relative): the server kept refusing the base version")
    }

    /// Uploads to a temporary name beside `target`, then MOVEs it into place: for servers that ignore
    /// conditional headers, so the name is never half-written and (with `overwrite` false) never taken.
    func uploadThroughTemporary(_ target: String, from contents: UploadContents?, parent: String, overwrite: Bool, base: String? = nil) async throws {
        let temporary = (parent.isEmpty ? "" : parent + "/") + Self.temporaryPrefix + UUID().uuidString
        let uploaded = try await dav.upload(temporary, from: contents, headers: [])
        guard (200..<300).contains(uploaded.status) else { throw dav.statusError(uploaded.status, "PUT", target, body: uploaded.body) }
        do {
            if let base { try await checkBase(target, base) } else if try await existing(target) != nil {
                throw FileProviderError.collision(with: Self.identifier(target))
            }
            let moved = try await dav.send("MOVE", temporary, headers: [("Destination", dav.url(target)), ("Overwrite", overwrite ? "T" : "F")])
            guard (200..<300).contains(moved.status) else {
                throw moved.status == 412 ? FileProviderError.collision(with: Self.identifier(target)) : dav.statusError(moved.status, "MOVE", target, body: moved.body)
            }
        } catch {
            _ = try? await dav.send("DELETE", temporary)
            throw error
        }
    }
}
