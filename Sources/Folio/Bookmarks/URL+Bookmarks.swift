public import Foundation
import FolioSystem
import SystemPackage
public import UniformTypes

#if !canImport(Darwin)
extension URL {
    /// Options for `bookmarkData(options:includingResourceValuesForKeys:relativeTo:)` (Apple's bits).
    public struct BookmarkCreationOptions: OptionSet, Sendable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Smaller data (the same here).
        public static let minimalBookmark = BookmarkCreationOptions(rawValue: 1 << 9)
        /// Suitable for a bookmark file (the same here).
        public static let suitableForBookmarkFile = BookmarkCreationOptions(rawValue: 1 << 10)
        /// An explicit security scope, for regaining access after relaunch.
        public static let withSecurityScope = BookmarkCreationOptions(rawValue: 1 << 11)
        /// With a security scope: resolution grants reading only.
        public static let securityScopeAllowOnlyReadAccess = BookmarkCreationOptions(rawValue: 1 << 12)
        /// No implicit security scope.
        public static let withoutImplicitSecurityScope = BookmarkCreationOptions(rawValue: 1 << 29)
    }

    /// Options for `init(resolvingBookmarkData:options:relativeTo:bookmarkDataIsStale:)` (Apple's bits).
    public struct BookmarkResolutionOptions: OptionSet, Sendable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// No user interaction (never any here).
        public static let withoutUI = BookmarkResolutionOptions(rawValue: 1 << 8)
        /// Do not mount volumes (never done here).
        public static let withoutMounting = BookmarkResolutionOptions(rawValue: 1 << 9)
        /// Use the bookmark's explicit security scope.
        public static let withSecurityScope = BookmarkResolutionOptions(rawValue: 1 << 10)
        /// Do not start accessing the scope implicitly; call `startAccessingSecurityScopedResource()`.
        public static let withoutImplicitStartAccessing = BookmarkResolutionOptions(rawValue: 1 << 15)
    }

    /// Bookmark data for the item at this URL: signed (an edited or forged bookmark is refused),
    /// resolvable after the item is renamed or moved within its file system, with the resource values
    /// of `keys` stored in it (read them back with `resourceValues(forKeys:fromBookmarkData:)`).
    ///
    /// - Throws: `CocoaError.fileReadNoSuchFile` when there is no item.
    public func bookmarkData(
        options: BookmarkCreationOptions = [], includingResourceValuesForKeys keys: Set<URLResourceKey>? = nil, relativeTo base: URL? = nil
    ) throws -> Data {
        let path = CoordinationPath.normalize(self.path)
        let status: FileStatus
        do { status = try FileStatus(path: FilePath(path), followSymlinks: true) } catch {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        let identity = try DocumentIdentity.identifier(ofItemAt: path, creating: true)
        var values: [String: WireValue] = [URLResourceKey.nameKey.rawValue: .string(lastPathComponent)]
        if let keys, !keys.isEmpty {
            let known = try promisedItemResourceValues(forKeys: keys)
            if let size = known.fileSize { values[URLResourceKey.fileSizeKey.rawValue] = .int(Int64(size)) }
            if let directory = known.isDirectory { values[URLResourceKey.isDirectoryKey.rawValue] = .bool(directory) }
            if let date = known.contentModificationDate {
                values[URLResourceKey.contentModificationDateKey.rawValue] = .double(date.timeIntervalSince1970)
            }
            if let type = known.contentType { values[URLResourceKey.typeIdentifierKey.rawValue] = .string(type.identifier) }
        }
        let relative = base.map { CoordinationPath.normalize($0.path) }.flatMap { base in
            CoordinationPath.isAncestor(base, of: path) ? String(path.dropFirst(base == "/" ? 1 : base.count + 1)) : nil
        }
        let bookmark = Bookmark(
            path: path, relativePath: relative, identity: identity, device: status.device, inode: status.inode,
            isDirectory: status.kind == .directory, created: Date().timeIntervalSince1970, options: options.rawValue, values: values)
        return bookmark.encoded(key: try BookmarkKeys.current())
    }

    /// Resolves bookmark data: the item where it is now (`bookmarkDataIsStale` is true when it moved
    /// or was renamed: make new bookmark data from the returned URL). The URL is security-scoped and,
    /// unless `.withoutImplicitStartAccessing`, access to it is started.
    ///
    /// - Throws: `CocoaError.fileReadCorruptFile` for data that is damaged, edited or not this user's;
    ///   `CocoaError.fileNoSuchFile` when the item is gone.
    public init(
        resolvingBookmarkData data: Data, options: BookmarkResolutionOptions = [], relativeTo base: URL? = nil,
        bookmarkDataIsStale: inout Bool
    ) throws {
        let bookmark = try Bookmark(decoding: data, key: try BookmarkKeys.current())
        var expected = bookmark.path
        if let relative = bookmark.relativePath, let base {
            expected = CoordinationPath.normalize(relative, base: CoordinationPath.normalize(base.path))
        }
        guard let (path, stale) = BookmarkResolver.locate(bookmark, at: expected) else {
            throw CocoaError(
                .fileNoSuchFile,
                userInfo: [NSFilePathErrorKey: bookmark.path, NSLocalizedDescriptionKey: "the bookmarked item no longer exists"])
        }
        bookmarkDataIsStale = stale
        self.init(fileURLWithPath: path, isDirectory: bookmark.isDirectory)
        let readOnly = BookmarkCreationOptions(rawValue: bookmark.options).contains(.securityScopeAllowOnlyReadAccess)
        SecurityScopes.shared.grant(path, readOnly: readOnly)
        if !options.contains(.withoutImplicitStartAccessing) { _ = SecurityScopes.shared.start(path) }
    }

    /// The resource values stored in bookmark data when it was made, without resolving it; nil for
    /// data that is not valid.
    public static func resourceValues(forKeys keys: Set<URLResourceKey>, fromBookmarkData data: Data) -> ItemResourceValues? {
        guard let key = try? BookmarkKeys.current(), let bookmark = try? Bookmark(decoding: data, key: key) else { return nil }
        var values = ItemResourceValues()
        let stored = bookmark.values
        if keys.contains(.nameKey) { values.name = stored[URLResourceKey.nameKey.rawValue]?.stringValue }
        if keys.contains(.fileSizeKey) { values.fileSize = stored[URLResourceKey.fileSizeKey.rawValue]?.intValue.map { Int($0) } }
        if keys.contains(.isDirectoryKey) { values.isDirectory = stored[URLResourceKey.isDirectoryKey.rawValue]?.boolValue }
        if keys.contains(.contentModificationDateKey), case .double(let seconds)? = stored[URLResourceKey.contentModificationDateKey.rawValue] {
            values.contentModificationDate = Date(timeIntervalSince1970: seconds)
        }
        if keys.contains(.typeIdentifierKey) { values.contentType = stored[URLResourceKey.typeIdentifierKey.rawValue]?.stringValue.flatMap { UTType($0) } }
        return values
    }

    /// Starts (or nests) access to a security-scoped URL. False when the URL carries no scope — even
    /// for a file the app can read anyway, such as one in its own container — or when this process
    /// already uses as many scopes as allowed (logged).
    public func startAccessingSecurityScopedResource() -> Bool {
        SecurityScopes.shared.start(CoordinationPath.normalize(path))
    }

    /// Balances one start; the last balancing stop ends access, extra stops do nothing.
    public func stopAccessingSecurityScopedResource() {
        SecurityScopes.shared.stop(CoordinationPath.normalize(path))
    }
}
#endif

/// The key bookmarks are signed with in this process.
package enum BookmarkKeys {
    /// A key for the current task only (tests).
    @TaskLocal package static var override: BookmarkKey?
    private static let loaded = Result { try BookmarkKey.load() }

    package static func current() throws -> BookmarkKey {
        if let override { return override }
        return try loaded.get()
    }
}
