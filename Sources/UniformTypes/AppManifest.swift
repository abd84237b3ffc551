public import Foundation
import Logging

/// An app's declarations, read from Apple's Info.plist keys in an XML or binary property list, or
/// the same keys in JSON: `CFBundleIdentifier`, `CFBundleExecutable`, `UTExportedTypeDeclarations`,
/// `UTImportedTypeDeclarations`, `CFBundleDocumentTypes` (with `NSIsRelatedItemType`),
/// `LSSupportsOpeningDocumentsInPlace` and `NSUbiquitousContainers`.
///
/// Parsing is strict: a manifest of the wrong shape, with invalid or reserved identifiers, a cycle
/// in its `UTTypeConformsTo`, or of more than `maximumSize` bytes, is refused with an error naming
/// the offending key.
public struct AppManifest: Sendable, Hashable {
    /// `CFBundleIdentifier`.
    public var bundleIdentifier: String
    /// `CFBundleDisplayName` or `CFBundleName`.
    public var name: String?
    /// `CFBundleVersion`.
    public var version: String?
    /// `UTExportedTypeDeclarations`.
    public var exportedTypes: [TypeDeclaration]
    /// `UTImportedTypeDeclarations`.
    public var importedTypes: [TypeDeclaration]
    /// `CFBundleDocumentTypes`.
    public var documentTypes: [DocumentTypeClaim]
    /// `LSSupportsOpeningDocumentsInPlace`.
    public var supportsOpeningDocumentsInPlace: Bool
    /// `NSUbiquitousContainers`, in identifier order.
    public var ubiquitousContainers: [UbiquitousContainer]
    /// `CFBundleExecutable`: the command that starts the app (a name on `PATH` or an absolute path),
    /// given a document's path as its argument by `folio open`.
    public var executable: String?

    /// `FolioDocumentTemplates`: absolute paths of template documents the app ships; the browser
    /// page offers each as a new document (beside the user's `~/Templates`).
    public var documentTemplates: [String]

    /// The largest manifest accepted, in bytes.
    public static let maximumSize = 1 << 20
    /// The most declarations or document types a manifest may hold.
    public static let maximumEntries = 4096

    /// Creates a manifest from its parts.
    public init(
        bundleIdentifier: String, name: String? = nil, version: String? = nil, exportedTypes: [TypeDeclaration] = [],
        importedTypes: [TypeDeclaration] = [], documentTypes: [DocumentTypeClaim] = [],
        supportsOpeningDocumentsInPlace: Bool = false, ubiquitousContainers: [UbiquitousContainer] = [], executable: String? = nil,
        documentTemplates: [String] = []
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.name = name
        self.version = version
        self.exportedTypes = exportedTypes
        self.importedTypes = importedTypes
        self.documentTypes = documentTypes
        self.supportsOpeningDocumentsInPlace = supportsOpeningDocumentsInPlace
        self.ubiquitousContainers = ubiquitousContainers
        self.executable = executable
        self.documentTemplates = documentTemplates
    }

    /// The types whose files count as related items (`NSIsRelatedItemType`) of the app's documents.
    public var relatedItemClaims: [DocumentTypeClaim] { documentTypes.filter(\.isRelatedItemType) }

    /// Reads a manifest file (XML or binary plist, or JSON).
    public init(contentsOf url: URL) throws(UniformTypeError) {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            data = try handle.read(upToCount: Self.maximumSize + 1) ?? Data()
        } catch {
            throw UniformTypeError(.unreadableFile, "cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(data: data, source: url.lastPathComponent)
    }

    /// Parses a manifest from bytes: a binary plist (`bplist00`), an XML plist, or a JSON object.
    public init(data: Data, source: String = "manifest") throws(UniformTypeError) {
        guard data.count <= Self.maximumSize else {
            throw UniformTypeError(
                .manifestTooLarge, "\(source): \(data.count) bytes is larger than the \(Self.maximumSize)-byte limit")
        }
        let root: Any
        do {
            let first = data.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) })
            if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
                root = try JSONSerialization.jsonObject(with: data)
            } else if data.starts(with: Array("bplist".utf8)) || first == UInt8(ascii: "<") {
                root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } else {
                throw UniformTypeError(.malformedManifest, "\(source): neither a property list nor a JSON object")
            }
        } catch let error as UniformTypeError {
            throw error
        } catch {
            throw UniformTypeError(.malformedManifest, "\(source): not a valid property list or JSON: \(error.localizedDescription)")
        }
        var reader = ManifestReader(source: source)
        self = try reader.manifest(from: root)
    }

    /// The manifest registered for app `identifier` in `directory` (`<id>.json` or `<id>.plist`),
    /// or nil when there is none or it is not valid.
    public static func registered(_ identifier: String, in directory: String) -> AppManifest? {
        for suffix in ["json", "plist"] {
            let url = URL(fileURLWithPath: "\(directory)/\(identifier).\(suffix)")
            if let manifest = try? AppManifest(contentsOf: url), manifest.bundleIdentifier == identifier { return manifest }
        }
        return nil
    }

    /// Reads every `*.plist` and `*.json` manifest in `directory`, in name order; refused ones are
    /// logged and skipped.
    static func loadAll(in directory: String, logger: Logger) -> [AppManifest] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var result: [AppManifest] = []
        for name in names.sorted() where name.hasSuffix(".plist") || name.hasSuffix(".json") {
            do {
                result.append(try AppManifest(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            } catch {
                logger.warning("skipping app manifest", metadata: ["file": "\(name)", "error": "\(error)"])
            }
        }
        return result
    }
}
