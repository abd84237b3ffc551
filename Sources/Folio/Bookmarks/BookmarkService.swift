import FolioSystem
package import Foundation
import SystemPackage
import UniformTypes

/// Makes, checks and resolves bookmark data with a key. The daemon runs it with the user's key
/// (apps ask it to sign and resolve); without a daemon a process runs it with the same key itself.
package enum BookmarkService {
    /// A resolved bookmark: where its item is now.
    package struct Resolution: Sendable, Equatable {
        package var path: String
        /// The item moved or was renamed since the bookmark was made.
        package var isStale: Bool
        package var isDirectory: Bool
        /// Made with `.securityScopeAllowOnlyReadAccess`.
        package var isReadOnly: Bool
        /// The bookmark's identity for its item.
        package var reference: ItemReference
    }

    /// The resource keys a bookmark can store.
    package static let storableKeys: [URLResourceKey] = [.nameKey, .fileSizeKey, .isDirectoryKey, .contentModificationDateKey, .typeIdentifierKey]

    /// Signed bookmark data for the item at `path` (normalized), storing the values of `keys`.
    ///
    /// - Throws: `CocoaError.fileReadNoSuchFile` when there is no item.
    package static func make(path: String, options: UInt, keys: Set<URLResourceKey>?, base: String?, key: BookmarkKey, app: String? = nil) throws -> Data {
        let item: ResolvedItem
        do { item = try ResolvedItem.resolve(path) } catch {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        return try make(item: item, path: path, options: options, keys: keys, base: base, key: key, app: app)
    }

    /// Signed bookmark data for `item`, recorded at `path`: its identity, status and values read
    /// through its descriptor (the item checked), and an identity given to it there if it has none.
    package static func make(
        item: ResolvedItem, path: String, options: UInt, keys: Set<URLResourceKey>?, base: String?, key: BookmarkKey, app: String? = nil
    ) throws -> Data {
        guard item.exists else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
        let status = item.status
        let identity = DocumentIdentity.identifier(of: item, creating: true)
        let url = URL(fileURLWithPath: path)
        var values: [String: WireValue] = [URLResourceKey.nameKey.rawValue: .string(url.lastPathComponent)]
        if let keys, !keys.isEmpty {
            if keys.contains(.fileSizeKey), status.kind == .regular { values[URLResourceKey.fileSizeKey.rawValue] = .int(status.size) }
            if keys.contains(.isDirectoryKey) { values[URLResourceKey.isDirectoryKey.rawValue] = .bool(status.kind == .directory) }
            if keys.contains(.contentModificationDateKey) { values[URLResourceKey.contentModificationDateKey.rawValue] = .double(status.modificationTime) }
            if keys.contains(.typeIdentifierKey) {
                let type = UTType.contentType(named: url, status: status, reading: FilePath(item.descriptorPath)).type
                values[URLResourceKey.typeIdentifierKey.rawValue] = .string(type.identifier)
            }
        }
        let relative = base.flatMap { base in
            CoordinationPath.isAncestor(base, of: path) ? String(path.dropFirst(base == "/" ? 1 : base.count + 1)) : nil
        }
        let bookmark = Bookmark(
            path: path, relativePath: relative, identity: identity, device: status.device, inode: status.inode,
            isDirectory: status.kind == .directory, created: Date().timeIntervalSince1970, options: options, values: values, app: app)
        return bookmark.encoded(key: key)
    }

    /// Checks and resolves bookmark data (`base` for bookmarks made `relativeTo:` a folder).
    ///
    /// - Throws: `CocoaError.fileReadCorruptFile` for data that is damaged, edited or not this user's;
    ///   `CocoaError.fileNoSuchFile` when the item is gone.
    package static func resolve(_ data: Data, base: String?, key: BookmarkKey, app: String? = nil) throws -> Resolution {
        let bookmark = try Bookmark(decoding: data, key: key)
        try checkOwner(bookmark, app: app)
        var expected = bookmark.path
        if let relative = bookmark.relativePath, let base {
            expected = CoordinationPath.normalize(relative, base: base)
        }
        guard let (path, stale) = BookmarkResolver.locate(bookmark.reference, at: expected) else {
            throw CocoaError(
                .fileNoSuchFile,
                userInfo: [NSFilePathErrorKey: bookmark.path, NSLocalizedDescriptionKey: "the bookmarked item no longer exists"])
        }
        let readOnly = URL.BookmarkCreationOptions(rawValue: bookmark.options).contains(.securityScopeAllowOnlyReadAccess)
        return Resolution(path: path, isStale: stale, isDirectory: bookmark.isDirectory, isReadOnly: readOnly, reference: bookmark.reference)
    }

    /// The values stored in checked bookmark data, by resource key name; nil for data that is not valid.
    package static func storedValues(_ data: Data, key: BookmarkKey) -> [String: WireValue]? {
        (try? Bookmark(decoding: data, key: key))?.values
    }

    /// Refuses bookmark data that `app` (nil: the user's own tools, which may use any) did not make:
    /// another app's bookmark is not this app's to resolve or read.
    package static func checkOwner(_ bookmark: Bookmark, app: String?) throws {
        guard let app, let owner = bookmark.app, owner != app else { return }
        throw CocoaError(.fileReadNoPermission, userInfo: [NSLocalizedDescriptionKey: "this bookmark data belongs to another app"])
    }

    /// Resource values from stored ones.
    package static func resourceValues(_ stored: [String: WireValue], keys: Set<URLResourceKey>) -> ItemResourceValues {
        var values = ItemResourceValues()
        if keys.contains(.nameKey) { values.name = stored[URLResourceKey.nameKey.rawValue]?.stringValue }
        if keys.contains(.fileSizeKey) { values.fileSize = stored[URLResourceKey.fileSizeKey.rawValue]?.intValue.map { Int($0) } }
        if keys.contains(.isDirectoryKey) { values.isDirectory = stored[URLResourceKey.isDirectoryKey.rawValue]?.boolValue }
        if keys.contains(.contentModificationDateKey), case .double(let seconds)? = stored[URLResourceKey.contentModificationDateKey.rawValue] {
            values.contentModificationDate = Date(timeIntervalSince1970: seconds)
        }
        if keys.contains(.typeIdentifierKey) {
            values.contentType = stored[URLResourceKey.typeIdentifierKey.rawValue]?.stringValue.flatMap { UTType($0) }
        }
        return values
    }
}
