/// One declaration of a uniform type: what an Info.plist's `UTExportedTypeDeclarations` entry,
/// the built-in table or a shared-mime-info entry says about an identifier.
public struct TypeDeclaration: Sendable, Hashable {
    /// Where a declaration comes from; earlier origins win when two declare the same identifier.
    public enum Origin: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Folio's built-in system table (Apple's core types).
        case system = 0
        /// An app's `UTExportedTypeDeclarations` ("I own this type").
        case exported = 1
        /// An app's `UTImportedTypeDeclarations` ("I use someone else's type").
        case imported = 2
        /// A MIME type known to shared-mime-info with no declared type carrying its tags.
        case sharedMimeInfo = 3

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

        /// A short name for the origin.
        public var description: String {
            switch self {
            case .system: "system"
            case .exported: "exported"
            case .imported: "imported"
            case .sharedMimeInfo: "shared-mime-info"
            }
        }
    }

    /// The type's identifier, such as `public.jpeg`.
    public var identifier: String
    /// Identifiers of the types this one conforms to, in declared order (`UTTypeConformsTo`).
    public var conformsTo: [String]
    /// Tags by class; the first tag of each class is the preferred one (`UTTypeTagSpecification`).
    public var tags: [UTTagClass: [String]]
    /// A description for people (`UTTypeDescription`).
    public var description: String?
    /// A web page that documents the type (`UTTypeReferenceURL`).
    public var referenceURL: String?
    /// The declaration's version (`UTTypeVersion`).
    public var version: Int?
    /// Where the declaration comes from.
    public var origin: Origin
    /// The app that declared it, for exported and imported declarations.
    public var owner: String?

    /// Creates a declaration.
    public init(
        identifier: String,
        conformsTo: [String] = [],
        tags: [UTTagClass: [String]] = [:],
        description: String? = nil,
        referenceURL: String? = nil,
        version: Int? = nil,
        origin: Origin = .system,
        owner: String? = nil
    ) {
        self.identifier = identifier
        self.conformsTo = conformsTo
        self.tags = tags
        self.description = description
        self.referenceURL = referenceURL
        self.version = version
        self.origin = origin
        self.owner = owner
    }
}
