public import Foundation
import FolioSystem
import SystemPackage

/// The user's tags on a file, kept as freedesktop does: a comma-separated list in the
/// `user.xdg.tags` extended attribute (KDE's Dolphin and Baloo read the same), which Folio's
/// queries see as `kMDItemUserTags`.
public enum FileTags {
    /// The extended attribute holding the tags.
    public static let attribute = "user.xdg.tags"

    /// The tags of the item at `url` (none when it has none).
    public static func tags(of url: URL) -> [String] { tags(atPath: url.path) }

    package static func tags(atPath path: String) -> [String] {
        guard let bytes = try? FilePath(path).extendedAttribute(named: attribute, followSymlinks: false) ?? nil,
            let text = String(validating: bytes, as: UTF8.self)
        else { return [] }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Sets the tags of the item at `url` (removing the attribute for none). Commas cannot be part
    /// of a tag and are refused.
    ///
    /// - Throws: `CocoaError.fileWriteNoPermission` and the like when the attribute cannot be written;
    ///   `CocoaError.fileWriteInvalidFileName` for a tag with a comma or nothing in it.
    public static func setTags(_ tags: [String], of url: URL) throws {
        var unique: [String] = []
        for tag in tags {
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.contains(","), trimmed.utf8.count <= 255 else {
                throw CocoaError(.fileWriteInvalidFileName, userInfo: [NSLocalizedDescriptionKey: "\"\(tag)\" is not a tag (empty, too long, or with a comma)"])
            }
            if !unique.contains(trimmed) { unique.append(trimmed) }
        }
        let file = FilePath(url.path)
        do {
            if unique.isEmpty {
                try file.removeExtendedAttribute(named: attribute)
            } else {
                try file.setExtendedAttribute(named: attribute, to: Array(unique.joined(separator: ",").utf8))
            }
        } catch {
            throw CocoaError(
                error == .noSuchFileOrDirectory ? .fileNoSuchFile : .fileWriteNoPermission,
                userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: error.rawValue) ?? .EIO)])
        }
    }
}
