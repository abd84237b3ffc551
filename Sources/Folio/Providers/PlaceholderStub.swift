#if canImport(Glibc)
@preconcurrency import Glibc
#endif
package import Foundation
import FolioSystem
import SystemPackage

/// What stands in a replica for a file whose content is not local: `name.ext.folio-cloud`, a small
/// JSON file beside where the document would be (Nextcloud's suffixed virtual files; Apple's
/// `.name.ext.icloud` of older macOS, but visible, so `ls` shows what is in the cloud).
///
/// The document's own name is absent, so a tool that does not use Folio cannot read wrong bytes
/// silently: `cat report.pdf` fails with "No such file", and the stub's bytes are its own (metadata,
/// never any of the document's). Folio reads stubs for promised-item metadata (name, size, type,
/// date) and the index lists the document under its own name as not downloaded; a coordinated
/// read or `folio drive download` materializes it.
///
/// Any program can write a file with this suffix, so a stub is untrusted bytes: it is read only
/// when small, and what it says of the document's name is never trusted (the file's name is).
package struct PlaceholderStub: Codable, Equatable, Sendable {
    /// The suffix that marks a stub.
    package static let suffix = ".folio-cloud"
    /// The largest stub read.
    package static let maximumSize = 4096
    private static let format = 1

    /// The document's name (the stub's name without the suffix).
    package var name: String
    /// The document's size in bytes.
    package var size: Int64
    /// The document's content modification date (seconds since 1970), when the server gave one.
    package var modified: Double?
    /// The document's uniform type identifier.
    package var contentType: String?

    package init(name: String, size: Int64, modified: Double?, contentType: String?) {
        self.name = name
        self.size = size
        self.modified = modified
        self.contentType = contentType
    }

    private enum CodingKeys: String, CodingKey {
        case format = "folio-placeholder", name, size, modified, contentType = "type", note
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard try container.decode(Int.self, forKey: .format) == Self.format else {
            throw DecodingError.dataCorruptedError(forKey: .format, in: container, debugDescription: "an unknown placeholder format")
        }
        name = try container.decode(String.self, forKey: .name)
        size = try container.decode(Int64.self, forKey: .size)
        modified = try container.decodeIfPresent(Double.self, forKey: .modified)
        contentType = try container.decodeIfPresent(String.self, forKey: .contentType)
        guard size >= 0, !name.isEmpty, !name.contains("/"), !name.utf8.contains(0), name != ".", name != "..",
            modified.map({ $0.isFinite }) ?? true
        else {
            throw DecodingError.dataCorruptedError(forKey: .name, in: container, debugDescription: "a placeholder with an impossible name, size or date")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.format, forKey: .format)
        try container.encode(name, forKey: .name)
        try container.encode(size, forKey: .size)
        try container.encodeIfPresent(modified, forKey: .modified)
        try container.encodeIfPresent(contentType, forKey: .contentType)
        try container.encode("In the Folio drive, not downloaded. Get it with: folio drive download <path without .folio-cloud>", forKey: .note)
    }

    /// The stub's bytes.
    package func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return ((try? encoder.encode(self)) ?? Data()) + Data("\n".utf8)
    }

    /// Reads `bytes` as the stub named `stubName`; nil when they are not one (too large, not the
    /// format). The document's name is always the stub's file name without the suffix (a renamed
    /// stub is a renamed document), whatever name the stub recorded when it was written.
    package static func parse(_ bytes: [UInt8], stubName: String) -> PlaceholderStub? {
        guard isStubName(stubName), bytes.count <= maximumSize, var stub = try? JSONDecoder().decode(PlaceholderStub.self, from: Data(bytes)) else { return nil }
        stub.name = documentName(ofStub: stubName)
        return stub
    }

    /// The stub at `path` (not followed if a symbolic link), or nil when there is none or it is not one.
    package static func read(at path: String) -> PlaceholderStub? {
        guard let bytes = try? FilePath(path).readRegularFilePrefix(limit: maximumSize + 1), bytes.count <= maximumSize else { return nil }
        return parse(bytes, stubName: String(path.split(separator: "/").last ?? ""))
    }

    /// Whether `name` is a stub's name (the suffix after at least one character).
    package static func isStubName(_ name: String) -> Bool {
        name.hasSuffix(suffix) && name.utf8.count > suffix.utf8.count
    }

    /// The document name a stub named `name` stands for.
    package static func documentName(ofStub name: String) -> String {
        String(name.dropLast(suffix.count))
    }
}
