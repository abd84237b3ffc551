#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Folio
import FolioSystem
public import Foundation
import SystemPackage

extension LocalFolderProvider {
    public func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, contents: URL?, options: FileProviderCreateItemOptions,
        request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        try FileProviderFilename.validate(template.filename)
        return try await perform {
            let parent = try self.folder(template.parentItemIdentifier)
            let path = parent.path + "/" + template.filename
            if let existing = self.existingItem(at: path, parent: parent.identifier) {
                let sameKind = (existing.status.kind == .directory) == template.contentType.isFolder
                if options.contains(.mayAlreadyExist), sameKind, template.contentType.isFolder {
                    return FileProviderItemResult(item: try self.record(existing))
                }
                throw FileProviderError.collision(with: existing.identifier, message: "“\(template.filename)” exists in its folder")
            }
            if template.contentType.isFolder {
                try self.collisionChecked(path, parent: parent.identifier) {
                    guard mkdir(path, 0o755) == 0 else { throw Errno(rawValue: errno) }
                }
            } else if template.contentType == .symbolicLink {
                let target = template.symlinkTargetPath ?? ""
                try self.collisionChecked(path, parent: parent.identifier) {
                    guard symlink(target, path) == 0 else { throw Errno(rawValue: errno) }
                }
            } else {
                let temporary = try self.stage(contents, in: parent.path, executable: template.fileSystemFlags.contains(.userExecutable))
                let identity = UUID().uuidString.lowercased()
                try? FilePath(temporary).setExtendedAttribute(named: DocumentIdentity.attribute, to: Array(identity.utf8))
                if fields.contains(.contentModificationDate), let date = template.contentModificationDate { Self.setModificationDate(date, of: temporary) }
                do {
                    try self.collisionChecked(path, parent: parent.identifier) { try FilePath(temporary).rename(toNewItemAt: FilePath(path)) }
                } catch {
                    unlink(temporary)
                    throw error
                }
            }
            return FileProviderItemResult(item: try self.record(self.remember(path: path, parent: parent.identifier)))
        }
    }

    public func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, contents: URL?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        if changedFields.contains(.filename) { try FileProviderFilename.validate(item.filename) }
        return try await perform {
            var entry = try self.entry(item.itemIdentifier)
            guard entry.identifier != .rootContainer || changedFields.isDisjoint(with: [.filename, .parentItemIdentifier, .contents]) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "the root cannot be renamed, moved or written"])
            }
            if changedFields.contains(.contents), entry.status.kind == .regular {
                let current = try self.record(entry).itemVersion.contentVersion
                if baseVersion.contentVersion != FileProviderItemVersion.beforeFirstSyncComponent, baseVersion.contentVersion != current,
                    !options.contains(.mayAlreadyExist)
                {
                    throw FileProviderError(.localVersionConflictingWithServer, message: "“\(entry.name)” changed since the base version")
                }
                let folder = String(entry.path.dropLast(entry.name.utf8.count + 1))
                let temporary = try self.stage(contents, in: folder, executable: entry.status.mode & 0o100 != 0)
                DocumentIdentity.copyUserAttributes(from: entry.path, to: temporary)
                if changedFields.contains(.contentModificationDate), let date = item.contentModificationDate {
                    Self.setModificationDate(date, of: temporary)
                }
                do {
                    try FilePath(temporary).rename(replacing: FilePath(entry.path))
                } catch {
                    unlink(temporary)
                    throw error
                }
                entry = try self.remember(path: entry.path, parent: entry.parent)
            } else if changedFields.contains(.contentModificationDate), let date = item.contentModificationDate {
                Self.setModificationDate(date, of: entry.path)
            }
            if changedFields.contains(.fileSystemFlags), entry.status.kind == .regular {
                let mode = item.fileSystemFlags.contains(.userExecutable) ? entry.status.mode | 0o100 : entry.status.mode & ~0o100
                chmod(entry.path, mode_t(mode))
            }
            if changedFields.contains(.filename) || changedFields.contains(.parentItemIdentifier) {
                let name = changedFields.contains(.filename) ? item.filename : entry.name
                let parent = changedFields.contains(.parentItemIdentifier) ? try self.folder(item.parentItemIdentifier) : try self.entry(entry.parent)
                let destination = parent.path + "/" + name
                if entry.status.kind == .directory, destination.hasPrefix(entry.path + "/") {
                    throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSLocalizedDescriptionKey: "a folder cannot move into itself"])
                }
                if !destination.utf8.elementsEqual(entry.path.utf8) {
                    if let existing = self.existingItem(at: destination, parent: parent.identifier), existing.status.inode != entry.status.inode {
                        throw FileProviderError.collision(with: existing.identifier, message: "“\(name)” exists in its folder")
                    }
                    try self.collisionChecked(destination, parent: parent.identifier) {
                        // A change of case only, on a file system that ignores case, is a rename onto itself.
                        if destination.lowercased() == entry.path.lowercased(), (try? FileStatus(path: FilePath(destination)))?.inode == entry.status.inode {
                            try FilePath(entry.path).rename(replacing: FilePath(destination))
                        } else {
                            try FilePath(entry.path).rename(toNewItemAt: FilePath(destination))
                        }
                    }
                    // A move changes the paths of everything below: list again once.
                    self.refresh()
                    return FileProviderItemResult(item: try self.record(self.entry(entry.identifier)))
                }
            }
            // Only this item changed (content, date, mode): read its status again, not the whole tree.
            guard entry.identifier != .rootContainer else { return FileProviderItemResult(item: try self.record(self.entry(.rootContainer))) }
            return FileProviderItemResult(item: try self.record(self.remember(path: entry.path, parent: entry.parent)))
        }
    }

    public func deleteItem(
        identifier: FileProviderItemIdentifier, baseVersion: FileProviderItemVersion, options: FileProviderDeleteItemOptions,
        request: FileProviderRequest
    ) async throws {
        try await perform {
            guard identifier != .rootContainer else { throw FileProviderError(.deletionRejected, message: "the root cannot be deleted") }
            let entry: Entry
            do {
                entry = try self.entry(identifier)
            } catch let error as FileProviderError where error.code == .noSuchItem {
                return
            }
            if entry.status.kind == .regular, baseVersion.contentVersion != FileProviderItemVersion.beforeFirstSyncComponent,
                try self.record(entry).itemVersion.contentVersion != baseVersion.contentVersion
            {
                throw FileProviderError(.localVersionConflictingWithServer, message: "“\(entry.name)” changed since the base version")
            }
            if entry.status.kind == .directory {
                var empty = true
                DirectoryScanner().list(entry.path, visit: { _ in empty = false }, skipped: { _, _ in })
                if !empty, !options.contains(.recursive) {
                    throw FileProviderError(.directoryNotEmpty, message: "“\(entry.name)” is not empty")
                }
                try FileManager.default.removeItem(atPath: entry.path)
            } else {
                guard unlink(entry.path) == 0 || errno == ENOENT else { throw Errno(rawValue: errno) }
            }
            self.refresh()
        }
    }

    // MARK: Helpers

    /// The folder `identifier`, or noSuchItem.
    private func folder(_ identifier: FileProviderItemIdentifier) throws -> Entry {
        let entry = try entry(identifier)
        guard entry.status.kind == .directory else { throw FileProviderError(.noSuchItem, message: "\(identifier) is not a folder") }
        return entry
    }

    /// What is at `path` now, if anything.
    private func existingItem(at path: String, parent: FileProviderItemIdentifier) -> Entry? {
        guard (try? FileStatus(path: FilePath(path))) != nil else { return nil }
        if let identifier = pathIndex[Array(path.utf8)], let entry = entries[identifier] { return entry }
        refresh()
        return pathIndex[Array(path.utf8)].flatMap { entries[$0] }
    }

    /// Runs `body`, turning "exists" into a collision with the item that is there.
    private func collisionChecked(_ path: String, parent: FileProviderItemIdentifier, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch Errno.fileExists {
            refresh()
            let existing = pathIndex[Array(path.utf8)] ?? FileProviderItemIdentifier("unknown")
            throw FileProviderError.collision(with: existing, message: "“\(path.split(separator: "/").last ?? "")” exists in its folder")
        }
    }

    /// Copies `contents` (or nothing, for an empty file) to a temporary file in `folder`.
    private func stage(_ contents: URL?, in folder: String, executable: Bool) throws -> String {
        let temporary = folder + "/" + Self.temporaryPrefix + UUID().uuidString
        let mode: FilePermissions = executable ? [.ownerReadWriteExecute, .groupRead, .groupExecute, .otherRead, .otherExecute] : [.ownerReadWrite, .groupRead, .otherRead]
        if let contents {
            try ContentDigest.copy(from: contents.path, to: temporary, permissions: mode)
        } else {
            let descriptor = try FileDescriptor.open(FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate], permissions: mode)
            try descriptor.close()
        }
        return temporary
    }

    /// `UTIME_OMIT`, which Swift's Glibc module does not import.
    private static let utimeOmit = (1 << 30) - 2

    /// Sets a file's modification time.
    static func setModificationDate(_ date: Date, of path: String) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let nanoseconds = Int((date.timeIntervalSince1970 - seconds) * 1e9)
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: utimeOmit), timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds)]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }
}
