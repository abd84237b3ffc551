import Crypto
public import Foundation
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
enum Thumbnails {
    static let largestKey = URLThumbnailDictionaryItem.NSThumbnail1024x1024SizeKey

    static func cachePath(for url: URL) -> String {
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.cache"
        let uri = URL(fileURLWithPath: url.path).absoluteString
        let digest = Insecure.MD5.hash(data: Data(uri.utf8)).map { String(format: "%02x", $0) }.joined()
        return cache + "/thumbnails/x-large/" + digest + ".png"
    }

    /// Stores a PNG thumbnail of the file at `url`.
    static func store(_ png: Data, for url: URL) throws {
        let path = cachePath(for: url)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try SafeSave.write(png, to: path, preservingAttributesOf: nil, mode: 0o600)
    }

    /// The stored thumbnail of the file at `url`, or nil.
    static func thumbnail(for url: URL) -> Data? {
        FileManager.default.contents(atPath: cachePath(for: url))
    }
}
