import Folio
package import Foundation

/// A conflict version every device sees. The device that keeps a conflict version (the loser of
/// a reconciliation) uploads its bytes to `.folio/conflicts/<sha256>` and this manifest beside
/// them, `<sha256>-<path key>.json`; every other device adds the bytes to the document's
/// unresolved conflict versions, once, while the document is downloaded there. Equal losers share
/// one object and one manifest per document.
///
/// A manifest comes from the server, so it is untrusted: it is read only when small, its object
/// must be a SHA-256 the downloaded bytes match, and its path a relative one inside the drive.
package struct SharedConflict: Codable, Equatable, Sendable {
    package var format = 1
    /// The document's path in the drive.
    package var path: String
    /// The SHA-256 of the conflict version's bytes (hex): the object's name.
    package var object: String
    package var size: Int64
    /// The host that kept it.
    package var device: String
    /// When it was kept (seconds since 1970).
    package var date: Double

    package static let maximumManifestSize = 16 << 10

    /// The manifest's name on the server.
    package var manifestName: String { Self.manifestName(object: object, path: path) }

    package static func manifestName(object: String, path: String) -> String {
        object + "-" + pathKey(path) + ".json"
    }

    /// The part of a manifest's name that stands for its document's path.
    package static func pathKey(_ path: String) -> String {
        String(ContentDigest.sha256(of: Data(path.utf8)).prefix(16))
    }

    /// The path key a manifest's name ends with (see ``isManifestName(_:)``).
    package static func pathKey(ofManifest name: String) -> String {
        String(name.utf8.dropFirst(65).prefix(16)) ?? ""
    }

    package init(path: String, object: String, size: Int64, device: String, date: Double) {
        self.path = path
        self.object = object
        self.size = size
        self.device = device
        self.date = date
    }

    /// Whether `name` is a manifest's name (an object's is the bare hash).
    package static func isManifestName(_ name: String) -> Bool { name.hasSuffix(".json") && name.utf8.count == 64 + 1 + 16 + 5 }

    /// Reads a manifest; nil when it is not one (too large, malformed, a path leaving the drive, a
    /// name that does not match what it says).
    package static func parse(_ data: Data, name: String) -> SharedConflict? {
        guard data.count <= maximumManifestSize, let manifest = try? JSONDecoder().decode(SharedConflict.self, from: data), manifest.format == 1,
            isSHA256(manifest.object), manifest.size >= 0, isRelativePath(manifest.path), manifest.manifestName == name
        else { return nil }
        return manifest
    }

    package static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Whether `path` is a path inside the drive: relative, no empty, `.` or `..` segment, no NUL.
    package static func isRelativePath(_ path: String) -> Bool {
        !path.isEmpty && path.utf8.count <= 4096 && !path.utf8.contains(0)
            && path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }
}
