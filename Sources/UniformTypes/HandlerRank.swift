/// How strongly an app claims a document type (`LSHandlerRank`). Owner > Default > Alternate;
/// `none` is never chosen to open a document.
public enum HandlerRank: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Never chosen to open, though the app may accept the type in other ways.
    case none = 0
    /// A secondary viewer.
    case alternate = 1
    /// An opener; the rank when none is given.
    case `default` = 2
    /// The creator of the type.
    case owner = 3

    /// Reads an `LSHandlerRank` value (`Owner`, `Default`, `Alternate`, `None`).
    public init?(plistValue: String) {
        switch plistValue {
        case "Owner": self = .owner
        case "Default": self = .default
        case "Alternate": self = .alternate
        case "None": self = .none
        default: return nil
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// The `LSHandlerRank` spelling.
    public var description: String {
        switch self {
        case .owner: "Owner"
        case .default: "Default"
        case .alternate: "Alternate"
        case .none: "None"
        }
    }
}

/// What an app does with a document type it claims (`CFBundleTypeRole`).
public enum DocumentRole: String, Sendable, Hashable, CaseIterable {
    /// Reads and writes the type.
    case editor = "Editor"
    /// Reads the type.
    case viewer = "Viewer"
    /// Provides runtime services for the type.
    case shell = "Shell"
    /// Declares the type but does not open it.
    case none = "None"
}

/// One `CFBundleDocumentTypes` entry: the document types an app can open, and how.
public struct DocumentTypeClaim: Sendable, Hashable {
    /// `CFBundleTypeName`.
    public var name: String?
    /// `CFBundleTypeRole` (default Editor... as Launch Services treats a missing role as Editor).
    public var role: DocumentRole
    /// `LSHandlerRank` (default `.default`).
    public var rank: HandlerRank
    /// `LSItemContentTypes`: identifiers of the claimed types.
    public var contentTypes: [String]
    /// `CFBundleTypeExtensions` (legacy; used only when `contentTypes` is empty).
    public var extensions: [String]
    /// `CFBundleTypeMIMETypes` (legacy; used only when `contentTypes` is empty).
    public var mimeTypes: [String]
    /// `LSTypeIsPackage`.
    public var isPackage: Bool
    /// `NSIsRelatedItemType`: files of this type next to a document the app may reach (same name,
    /// this type's extension) are reachable too — subtitles, lock files, autosaves, sidecars.
    public var isRelatedItemType: Bool

    /// Creates a claim.
    public init(
        name: String? = nil, role: DocumentRole = .editor, rank: HandlerRank = .default, contentTypes: [String],
        extensions: [String] = [], mimeTypes: [String] = [], isPackage: Bool = false, isRelatedItemType: Bool = false
    ) {
        self.name = name
        self.role = role
        self.rank = rank
        self.contentTypes = contentTypes
        self.extensions = extensions
        self.mimeTypes = mimeTypes
        self.isPackage = isPackage
        self.isRelatedItemType = isRelatedItemType
    }
}
