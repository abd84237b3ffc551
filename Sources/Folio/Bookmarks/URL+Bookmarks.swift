public import Foundation
import UniformTypes
import FolioSystem
import SystemPackage

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
    /// With a daemon, the daemon signs it — and only for an item this app may reach; bookmarking a
    /// granted item keeps the grant across relaunches.
    ///
    /// - Throws: `CocoaError.fileReadNoSuchFile` when there is no item; `.fileReadNoPermission`
    ///   when this app holds no grant for it.
    public func bookmarkData(
        options: BookmarkCreationOptions = [], includingResourceValuesForKeys keys: Set<URLResourceKey>? = nil, relativeTo base: URL? = nil
    ) throws -> Data {
        let path = CoordinationPath.normalize(self.path)
        let basePath = base.map { CoordinationPath.normalize($0.path) }
        guard let daemon = AccessClient.daemon else {
            return try BookmarkService.make(path: path, options: options.rawValue, keys: keys, base: basePath, key: try BookmarkKeys.current())
        }
        let reply = try AccessClient.send(
            daemon, BookmarkCreate(path: path, options: options.rawValue, keys: (keys ?? []).map(\.rawValue), base: basePath))
        guard let data = Data(base64Encoded: reply.data) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the Folio daemon sent no bookmark data"])
        }
        return data
    }

    /// Resolves bookmark data: the item where it is now (`bookmarkDataIsStale` is true when it moved
    /// or was renamed: make new bookmark data from the returned URL). The URL is security-scoped and,
    /// unless `.withoutImplicitStartAccessing`, access to it is started.
    ///
    /// - Throws: `CocoaError.fileReadCorruptFile` for data that is damaged, edited or not this user's;
    ///   `CocoaError.fileNoSuchFile` when the item is gone; `.fileReadNoPermission` when the grant
    ///   it relied on was revoked.
    public init(
        resolvingBookmarkData data: Data, options: BookmarkResolutionOptions = [], relativeTo base: URL? = nil,
        bookmarkDataIsStale: inout Bool
    ) throws {
        let basePath = base.map { CoordinationPath.normalize($0.path) }
        let path: String
        let isDirectory: Bool
        let readOnly: Bool
        if let daemon = AccessClient.daemon {
            guard data.count <= BookmarkData.maximumBytes * 3 / 4 else {
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "not valid bookmark data: too large"])
            }
            let reply = try AccessClient.send(daemon, BookmarkResolve(data: data, base: basePath))
            path = reply.path
            bookmarkDataIsStale = reply.stale
            isDirectory = reply.directory
            readOnly = reply.readOnly
        } else {
            let resolution = try BookmarkService.resolve(data, base: basePath, key: try BookmarkKeys.current())
            path = resolution.path
            bookmarkDataIsStale = resolution.isStale
            isDirectory = resolution.isDirectory
            readOnly = resolution.isReadOnly
        }
        self.init(fileURLWithPath: path, isDirectory: isDirectory)
        SecurityScopes.shared.grant(path, readOnly: readOnly)
        if !options.contains(.withoutImplicitStartAccessing) { _ = SecurityScopes.shared.start(path, verify: AccessClient.verifier) }
    }

    /// Writes bookmark data to a file at `bookmarkFileURL` (Apple writes an alias file; Folio, the
    /// data as it is, replacing the file whole), to read back with ``bookmarkData(withContentsOf:)``
    /// or resolve with ``init(resolvingAliasFileAt:options:)``.
    public static func writeBookmarkData(_ bookmarkData: Data, to bookmarkFileURL: URL) throws {
        try bookmarkData.write(to: bookmarkFileURL, options: .atomic)
    }

    /// The bookmark data in the file at `bookmarkFileURL` (written by ``writeBookmarkData(_:to:)``).
    ///
    /// - Throws: the read's error; `CocoaError.fileReadCorruptFile` when the file holds no bookmark.
    public static func bookmarkData(withContentsOf bookmarkFileURL: URL) throws -> Data {
        let data = try Data(contentsOf: bookmarkFileURL)
        guard data.starts(with: Bookmark.magic), data.count <= Bookmark.maximumPayload + 256 else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSURLErrorKey: bookmarkFileURL, NSLocalizedDescriptionKey: "\(bookmarkFileURL.path) holds no bookmark"])
        }
        return data
    }

    /// The item an alias file points to (Apple's `init(resolvingAliasFileAt:options:)`): a file
    /// written by ``writeBookmarkData(_:to:)`` resolves as its bookmark (with `options`), a symbolic
    /// link as its destination (every link followed, as Apple counts links as aliases); any other
    /// item is `url` itself.
    ///
    /// - Throws: `CocoaError.fileNoSuchFile` when there is no item at `url` or a link's destination
    ///   is gone; the bookmark's errors for a bookmark file.
    public init(resolvingAliasFileAt url: URL, options: BookmarkResolutionOptions = []) throws {
        let status: FileStatus
        do {
            status = try FileStatus(path: FilePath(url.path))
        } catch {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSURLErrorKey: url])
        }
        switch status.kind {
        case .symbolicLink:
            guard (try? FileStatus(path: FilePath(url.path), followSymlinks: true)) != nil else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSURLErrorKey: url, NSLocalizedDescriptionKey: "\(url.path) links to an item that is gone"])
            }
            self = url.resolvingSymlinksInPath()
        case .regular where status.size <= Int64(Bookmark.maximumPayload + 256):
            guard let data = try? URL.bookmarkData(withContentsOf: url) else {
                self = url
                return
            }
            var stale = false
            try self.init(resolvingBookmarkData: data, options: options, bookmarkDataIsStale: &stale)
        default:
            self = url
        }
    }

    /// The resource values stored in bookmark data when it was made, without resolving it; nil for
    /// data that is not valid.
    public static func resourceValues(forKeys keys: Set<URLResourceKey>, fromBookmarkData data: Data) -> ItemResourceValues? {
        let stored: [String: WireValue]?
        if let daemon = AccessClient.daemon {
            guard data.count <= BookmarkData.maximumBytes * 3 / 4 else { return nil }
            stored = (try? AccessClient.send(daemon, BookmarkValues(data: data)))?["values"]?.objectValue
        } else {
            stored = (try? BookmarkKeys.current()).flatMap { BookmarkService.storedValues(data, key: $0) }
        }
        return stored.map { BookmarkService.resourceValues($0, keys: keys) }
    }

    /// Starts (or nests) access to a security-scoped URL. False when the URL carries no scope — even
    /// for a file the app can read anyway, such as one in its own container — or when this process
    /// already uses as many scopes as allowed (logged).
    public func startAccessingSecurityScopedResource() -> Bool {
        SecurityScopes.shared.start(CoordinationPath.normalize(path), verify: AccessClient.verifier)
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
