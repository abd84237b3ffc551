import Crypto
public import Foundation
public import UniformTypes
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

#if !canImport(Darwin)
/// Keys of a thumbnail dictionary (Apple's `URLThumbnailDictionaryItem`).
public struct URLThumbnailDictionaryItem: RawRepresentable, Hashable, Sendable {
    /// The key's name.
    public let rawValue: String
    /// Creates a key.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A thumbnail up to 1024×1024 pixels (PNG data here).
    public static let NSThumbnail1024x1024SizeKey = URLThumbnailDictionaryItem(rawValue: "NSThumbnail1024x1024SizeKey")
}
#endif

/// Thumbnails in the freedesktop thumbnail cache (`$XDG_CACHE_HOME/thumbnails/x-large/<md5 of the
/// file URI>.png`), where file managers find them too.
package enum Thumbnails {
    static let largestKey = URLThumbnailDictionaryItem.NSThumbnail1024x1024SizeKey

    /// A cache folder for the current task only (tests).
    @TaskLocal static var cacheOverride: String?

    /// `$XDG_CACHE_HOME/thumbnails` (default `~/.cache/thumbnails`).
    package static var cacheDirectory: String {
        if let cacheOverride { return cacheOverride }
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.cache"
        return cache + "/thumbnails"
    }

    static func cachePath(for url: URL, in directory: String = cacheDirectory) -> String {
        let uri = URL(fileURLWithPath: url.path).absoluteString
        let digest = Insecure.MD5.hash(data: Data(uri.utf8)).hexadecimal
        return directory + "/x-large/" + digest + ".png"
    }

    /// Stores a PNG thumbnail of the file at `url`.
    static func store(_ png: Data, for url: URL, in directory: String = cacheDirectory) throws {
        let path = cachePath(for: url, in: directory)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try SafeSave.write(png, to: path, preservingAttributesOf: nil, mode: 0o600)
    }

    /// The stored thumbnail of the file at `url`, or nil.
    static func thumbnail(for url: URL, in directory: String = cacheDirectory) -> Data? {
        FileManager.default.contents(atPath: cachePath(for: url, in: directory))
    }

    /// The stored thumbnail when it is not older than the file (modified `modified`, seconds since
    /// 1970); else a new one from the thumbnailers, or the old one when none can be made.
    package static func current(for url: URL, modified: Double, in directory: String = cacheDirectory) -> Data? {
        let cached = ItemStamp(path: cachePath(for: url, in: directory))
        if cached.exists, cached.modificationTime + 1 >= modified, let png = thumbnail(for: url, in: directory) { return png }
        return ThumbnailGenerator.generate(for: url, cache: directory) ?? thumbnail(for: url, in: directory)
    }
}

/// Resource values Folio knows of an item without reading its contents: what
/// `URL.promisedItemResourceValues(forKeys:)` returns, and what `URL.resourceValues(forKeys:fromBookmarkData:)`
/// returns from the values stored in a bookmark (Apple returns `URLResourceValues`, which Foundation
/// on Linux cannot make; the property names are the same).
public struct ItemResourceValues: Sendable {
    /// The item's name.
    public var name: String?
    /// Whether the item is a folder.
    public var isDirectory: Bool?
    /// The size in bytes.
    public var fileSize: Int?
    /// When the contents last changed.
    public var contentModificationDate: Date?
    /// The item's type.
    public var contentType: UTType?
    /// Thumbnails saved with the item (`Document.fileAttributesToWrite`), PNG data by size key.
    public var thumbnailDictionary: [URLThumbnailDictionaryItem: Data]?
    /// Whether the item is in the drive (`isUbiquitousItemKey`).
    public var isUbiquitousItem: Bool?
    /// Whether its newest contents are here (`ubiquitousItemDownloadingStatusKey`).
    public var ubiquitousItemDownloadingStatus: URLUbiquitousItemDownloadingStatus?
    /// Whether the server has its contents (`ubiquitousItemIsUploadedKey`).
    public var ubiquitousItemIsUploaded: Bool?
    /// Whether its contents wait to be, or are being, uploaded (`ubiquitousItemIsUploadingKey`).
    public var ubiquitousItemIsUploading: Bool?
    /// Whether its contents are being downloaded (`ubiquitousItemIsDownloadingKey`).
    public var ubiquitousItemIsDownloading: Bool?
    /// Whether it has conflict versions not resolved yet (`ubiquitousItemHasUnresolvedConflictsKey`).
    public var ubiquitousItemHasUnresolvedConflicts: Bool?
    /// Why its upload failed (`ubiquitousItemUploadingErrorKey`).
    public var ubiquitousItemUploadingError: NSError?
    /// Why its download failed (`ubiquitousItemDownloadingErrorKey`).
    public var ubiquitousItemDownloadingError: NSError?
}

#if !canImport(Darwin)
/// Where a drive item's contents are (Apple's `URLUbiquitousItemDownloadingStatus`, which
/// Foundation on Linux lacks).
public struct URLUbiquitousItemDownloadingStatus: RawRepresentable, Hashable, Sendable {
    /// Apple's string for the status.
    public var rawValue: String
    /// A status from Apple's string.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The newest contents are here.
    public static let current = URLUbiquitousItemDownloadingStatus(rawValue: "NSURLUbiquitousItemDownloadingStatusCurrent")
    /// A local copy is here, perhaps not the newest.
    public static let downloaded = URLUbiquitousItemDownloadingStatus(rawValue: "NSURLUbiquitousItemDownloadingStatusDownloaded")
    /// Only a placeholder is here.
    public static let notDownloaded = URLUbiquitousItemDownloadingStatus(rawValue: "NSURLUbiquitousItemDownloadingStatusNotDownloaded")
}
#endif

extension URL {
    /// The item's resource values that need no contents (Apple's
    /// `promisedItemResourceValues(forKeys:)`): name, folder or not, size, modification date,
    /// content type, and the thumbnails saved with it.
    ///
    /// - Throws: `CocoaError.fileReadNoSuchFile` when there is no item.
    public func promisedItemResourceValues(forKeys keys: Set<URLResourceKey>) throws -> ItemResourceValues {
        let stamp = ItemStamp(path: path)
        let wantsUbiquity = !keys.isDisjoint(with: Self.ubiquityKeys)
        let ubiquitous = wantsUbiquity || !stamp.exists ? FileManager.default.isUbiquitousItem(at: self) : false
        // What the daemon's index knows, asked once: an item whose content is not here, and the
        // drive's states.
        let facts = !stamp.exists || (wantsUbiquity && ubiquitous) ? Self.indexedFacts(path) : nil
        var values = ItemResourceValues()
        if stamp.exists {
            if keys.contains(.nameKey) { values.name = lastPathComponent }
            if keys.contains(.isDirectoryKey) { values.isDirectory = stamp.isDirectory }
            if keys.contains(.fileSizeKey) { values.fileSize = Int(stamp.size) }
            if keys.contains(.contentModificationDateKey) { values.contentModificationDate = Date(timeIntervalSince1970: stamp.modificationTime) }
            if keys.contains(URLResourceKey(rawValue: "NSURLContentTypeKey")) || keys.contains(.typeIdentifierKey) {
                values.contentType = try? UTType.contentType(ofItemAt: self).type
            }
            if keys.contains(.thumbnailDictionaryKey), !stamp.isDirectory {
                values.thumbnailDictionary = Thumbnails.current(for: self, modified: stamp.modificationTime).map { [Thumbnails.largestKey: $0] } ?? [:]
            }
        } else if let facts {
            // Not here: what the daemon's index knows (an item whose content is not local).
            if keys.contains(.nameKey) { values.name = facts.name }
            if keys.contains(.isDirectoryKey) { values.isDirectory = facts.kind == .directory }
            if keys.contains(.fileSizeKey) { values.fileSize = Int(facts.size) }
            if keys.contains(.contentModificationDateKey) { values.contentModificationDate = Date(timeIntervalSince1970: facts.modified) }
            if keys.contains(URLResourceKey(rawValue: "NSURLContentTypeKey")) || keys.contains(.typeIdentifierKey) { values.contentType = facts.type }
            if keys.contains(.thumbnailDictionaryKey) {
                values.thumbnailDictionary = Thumbnails.thumbnail(for: self).map { [Thumbnails.largestKey: $0] } ?? [:]
            }
        } else if ubiquitous {
            // A drive placeholder the index does not know yet: the item is there, its contents on the server.
            if keys.contains(.nameKey) { values.name = lastPathComponent }
        } else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        if wantsUbiquity { ubiquityValues(forKeys: keys, ubiquitous: ubiquitous, local: stamp.exists, sync: facts?.sync, into: &values) }
        return values
    }

    /// The ubiquity keys `promisedItemResourceValues(forKeys:)` answers.
    static let ubiquityKeys: Set<URLResourceKey> = [
        .isUbiquitousItemKey, .ubiquitousItemDownloadingStatusKey, .ubiquitousItemIsUploadedKey, .ubiquitousItemIsUploadingKey,
        .ubiquitousItemIsDownloadingKey, .ubiquitousItemHasUnresolvedConflictsKey, .ubiquitousItemUploadingErrorKey, .ubiquitousItemDownloadingErrorKey,
    ]

    /// The drive item's ubiquity values: its state with the server as the daemon's index keeps it
    /// (`sync`), its conflicts from the version store.
    private func ubiquityValues(
        forKeys keys: Set<URLResourceKey>, ubiquitous: Bool, local: Bool, sync: UbiquitousSyncState?, into values: inout ItemResourceValues
    ) {
        if keys.contains(.isUbiquitousItemKey) { values.isUbiquitousItem = ubiquitous }
        guard ubiquitous else { return }
        if keys.contains(.ubiquitousItemDownloadingStatusKey) { values.ubiquitousItemDownloadingStatus = local ? .current : .notDownloaded }
        if keys.contains(.ubiquitousItemIsUploadedKey) { values.ubiquitousItemIsUploaded = sync.map(\.isUploaded) }
        if keys.contains(.ubiquitousItemIsUploadingKey) { values.ubiquitousItemIsUploading = sync.map { !$0.isUploaded } }
        if keys.contains(.ubiquitousItemIsDownloadingKey) { values.ubiquitousItemIsDownloading = sync.map(\.isDownloading) }
        if keys.contains(.ubiquitousItemHasUnresolvedConflictsKey) {
            values.ubiquitousItemHasUnresolvedConflicts = !(FileVersion.unresolvedConflictVersionsOfItem(at: self) ?? []).isEmpty
        }
        if let sync, let error = sync.error {
            let failure = NSError.ubiquitousTransferFailure(error)
            if keys.contains(.ubiquitousItemUploadingErrorKey), !sync.isUploaded { values.ubiquitousItemUploadingError = failure }
            if keys.contains(.ubiquitousItemDownloadingErrorKey), sync.isUploaded { values.ubiquitousItemDownloadingError = failure }
        }
    }

    /// Whether the item exists, here or as an item the daemon's index knows whose content is not
    /// local (Apple's `checkPromisedItemIsReachable()`).
    ///
    /// - Throws: `CocoaError.fileReadNoSuchFile` when neither.
    public func checkPromisedItemIsReachable() throws -> Bool {
        if ItemStamp(path: path).exists || Self.indexedFacts(path) != nil { return true }
        throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }

    /// What the daemon's index knows of `path`, when a daemon runs and knows it.
    static func indexedFacts(_ path: String) -> MetadataFacts? {
        guard let daemon = AccessClient.daemon, let reply = try? daemon.send(ItemFacts(path: path)),
            let item = reply["item"]
        else { return nil }
        return IndexWire.decode(item)
    }
}
