public import Foundation

/// A uniform type: a reverse-DNS identifier for a kind of data, with conformance to other types and
/// tags (filename extensions, MIME types) that identify it elsewhere. Apple's `UTType`, with its API
/// and semantics.
///
/// A value keeps the snapshot of the type database it was made from, so reading its properties takes
/// no lock; types registered later are seen by values made later.
public struct UTType: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    enum Kind: Sendable {
        case declared(Int32)
        case dynamic(DynamicTypeCoding.Specification)
        case undeclared
    }

    /// The type's identifier, such as `public.jpeg`.
    public let identifier: String
    let kind: Kind
    let database: TypeDatabase

    init(identifier: String, kind: Kind, database: TypeDatabase) {
        self.identifier = identifier
        self.kind = kind
        self.database = database
    }

    init(index: Int32, database: TypeDatabase) {
        self.init(identifier: database.entries[Int(index)].identifier, kind: .declared(index), database: database)
    }

    // MARK: Creating types

    /// Creates the type with `identifier`, or returns nil if the system does not know it.
    ///
    /// A dynamic identifier (`dyn.a…`) that decodes yields its dynamic type.
    public init?(_ identifier: String) {
        self.init(identifier, database: TypeRegistry.shared.database)
    }

    /// Creates a type for `identifier`; with `allowUndeclared`, an unknown but valid identifier gives
    /// a type that is neither declared nor dynamic and conforms only to itself.
    public init?(identifier: String, allowUndeclared: Bool) {
        if let type = UTType(identifier) {
            self = type
        } else if allowUndeclared, TypeIdentifier.isValid(identifier) {
            self.init(identifier: identifier, kind: .undeclared, database: TypeRegistry.shared.database)
        } else {
            return nil
        }
    }

    init?(_ identifier: String, database: TypeDatabase) {
        if let index = database.index(ofIdentifier: identifier) {
            self.init(index: index, database: database)
        } else if let spec = DynamicTypeCoding.specification(of: identifier) {
            self.init(identifier: identifier, kind: .dynamic(spec), database: database)
        } else {
            return nil
        }
    }

    /// Creates a type your app owns (`UTExportedTypeDeclarations`). The result is the declared type
    /// when the declaration is registered, and otherwise a type that keeps the identifier.
    public init(exportedAs identifier: String, conformingTo parentType: UTType? = nil) {
        let database = TypeRegistry.shared.database
        self = UTType(identifier, database: database)
            ?? UTType(identifier: identifier, kind: .undeclared, database: database)
    }

    /// Creates a type your app uses but does not own (`UTImportedTypeDeclarations`).
    ///
    /// As on Apple's systems, when another declared type is preferred for this type's preferred
    /// filename extension, that type may be returned instead: do not cache the result.
    public init(importedAs identifier: String, conformingTo parentType: UTType? = nil) {
        let database = TypeRegistry.shared.database
        guard let type = UTType(identifier, database: database) else {
            self.init(identifier: identifier, kind: .undeclared, database: database)
            return
        }
        if case .declared(let index) = type.kind, database.entries[Int(index)].origin == .imported,
            let ext = type.preferredFilenameExtension,
            let preferred = database.indexes(forTag: ext, tagClass: .filenameExtension).first,
            preferred != index, database.entries[Int(preferred)].origin < .imported
        {
            self.init(index: preferred, database: database)
            return
        }
        self = type
    }

    /// Creates the type for a tag, such as a filename extension or MIME type, that conforms to
    /// `supertype`. When no declared type has the tag, returns a dynamic type that carries it.
    /// Returns nil for an empty tag or, for filename extensions, one that contains a `/`.
    public init?(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?) {
        self.init(tag: tag, tagClass: tagClass, conformingTo: supertype, database: TypeRegistry.shared.database)
    }

    init?(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?, database: TypeDatabase) {
        guard Self.isValidTag(tag, tagClass: tagClass) else { return nil }
        if let index = UTType.firstIndex(tag: tag, tagClass: tagClass, conformingTo: supertype, database: database) {
            self.init(index: index, database: database)
            return
        }
        let parent = supertype?.identifier ?? "public.data"
        let normalized = tagClass.normalize(tag)
        let identifier = DynamicTypeCoding.identifier(tag: normalized, tagClass: tagClass, conformsTo: parent)
        let spec = DynamicTypeCoding.Specification(conformsTo: [parent], tags: [tagClass: [normalized]])
        self.init(identifier: identifier, kind: .dynamic(spec), database: database)
    }

    /// Creates the type for a filename extension (without the dot); the same as
    /// `UTType(tag: filenameExtension, tagClass: .filenameExtension, conformingTo: supertype)`.
    public init?(filenameExtension: String, conformingTo supertype: UTType = .data) {
        self.init(tag: filenameExtension, tagClass: .filenameExtension, conformingTo: supertype)
    }

    /// Creates the type for a MIME type; the same as
    /// `UTType(tag: mimeType, tagClass: .mimeType, conformingTo: supertype)`.
    public init?(mimeType: String, conformingTo supertype: UTType = .data) {
        self.init(tag: mimeType, tagClass: .mimeType, conformingTo: supertype)
    }

    /// Returns every declared type with the tag that conforms to `supertype`, public types first.
    public static func types(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?) -> [UTType] {
        let database = TypeRegistry.shared.database
        guard isValidTag(tag, tagClass: tagClass) else { return [] }
        return indexes(tag: tag, tagClass: tagClass, conformingTo: supertype, database: database).map {
            UTType(index: $0, database: database)
        }
    }

    static func indexes(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?, database: TypeDatabase)
        -> [Int32]
    {
        let candidates = database.indexes(forTag: tag, tagClass: tagClass)
        guard let supertype else { return candidates }
        guard let parent = supertype.index(in: database) else { return [] }
        return candidates.filter { database.conforms($0, to: parent) }
    }

    /// The best declared type for a tag: `indexes(…).first` without building the list.
    static func firstIndex(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?, database: TypeDatabase)
        -> Int32?
    {
        let candidates = database.indexes(forTag: tag, tagClass: tagClass)
        guard let supertype else { return candidates.first }
        guard let parent = supertype.index(in: database) else { return nil }
        return candidates.first { database.conforms($0, to: parent) }
    }

    /// This type's entry in `database`: its own index when it was made from that snapshot.
    func index(in database: TypeDatabase) -> Int32? {
        if case .declared(let index) = kind, self.database === database { return index }
        return database.index(ofIdentifier: identifier)
    }

    static func isValidTag(_ tag: String, tagClass: UTTagClass) -> Bool {
        let trimmed = tag.trimmingSpaces()
        guard !trimmed.isEmpty, trimmed.utf8.count <= 255, !trimmed.utf8.contains(0) else { return false }
        if tagClass == .filenameExtension { return !trimmed.utf8.contains(UInt8(ascii: "/")) }
        return true
    }

    // MARK: Identity

    /// Whether the system declares this type (rather than generating it dynamically).
    public var isDeclared: Bool {
        if case .declared = kind { return true }
        return false
    }

    /// Whether the type was generated for an unknown tag (`dyn.…`).
    public var isDynamic: Bool {
        if case .dynamic = kind { return true }
        return false
    }

    /// Whether the identifier is in the `public.` domain, reserved for the system.
    public var isPublic: Bool { TypeIdentifier.isPublic(identifier) }

    /// Where the type's declaration comes from; nil for dynamic and undeclared types.
    public var origin: TypeDeclaration.Origin? {
        guard case .declared(let index) = kind else { return nil }
        return database.entries[Int(index)].origin
    }

    /// The type's declaration; nil for dynamic and undeclared types.
    public var declaration: TypeDeclaration? {
        guard case .declared(let index) = kind else { return nil }
        return database.entries[Int(index)].declaration
    }

    // MARK: Conformance

    /// Returns whether this type is `type` or a subtype of it, transitively.
    public func conforms(to type: UTType) -> Bool {
        // Both from one snapshot (the common case): compare entries, no identifier hashing.
        if case .declared(let index) = kind, case .declared(let other) = type.kind, database === type.database {
            return database.conforms(index, to: other)
        }
        if TypeIdentifier.key(identifier) == TypeIdentifier.key(type.identifier) { return true }
        switch kind {
        case .declared(let index):
            guard let other = type.index(in: database) else { return false }
            return database.conforms(index, to: other)
        case .dynamic(let spec):
            return spec.conformsTo.contains { parent in
                guard let parentType = UTType(parent, database: database) else { return parent == type.identifier }
                return parentType.conforms(to: type)
            }
        case .undeclared:
            return false
        }
    }

    /// Returns whether this type conforms to `type` and is not `type` itself.
    public func isSubtype(of type: UTType) -> Bool { self != type && conforms(to: type) }

    /// Returns whether `type` conforms to this type and is not this type itself.
    public func isSupertype(of type: UTType) -> Bool { type.isSubtype(of: self) }

    /// Every type this one conforms to, transitively, excluding itself.
    public var supertypes: Set<UTType> {
        switch kind {
        case .declared(let index):
            return Set(database.entries[Int(index)].ancestors.map { UTType(index: $0, database: database) })
        case .dynamic(let spec):
            var result = Set<UTType>()
            for parent in spec.conformsTo {
                if let type = UTType(parent, database: database) {
                    result.insert(type)
                    result.formUnion(type.supertypes)
                }
            }
            return result
        case .undeclared:
            return []
        }
    }

    /// Supertypes ordered nearest first: direct parents in declared order, then theirs.
    public var supertypesNearestFirst: [UTType] {
        switch kind {
        case .declared(let index):
            return database.supertypesNearestFirst(of: index).map { UTType(index: $0, database: database) }
        case .dynamic(let spec):
            var result: [UTType] = []
            for parent in spec.conformsTo.compactMap({ UTType($0, database: database) }) where !result.contains(parent) {
                result.append(parent)
            }
            for parent in result { for s in parent.supertypesNearestFirst where !result.contains(s) { result.append(s) } }
            return result
        case .undeclared:
            return []
        }
    }

    // MARK: Tags and descriptions

    /// The type's tags by class, preferred tag first in each.
    public var tags: [UTTagClass: [String]] {
        switch kind {
        case .declared(let index): database.entries[Int(index)].tags
        case .dynamic(let spec): spec.tags
        case .undeclared: [:]
        }
    }

    /// The preferred filename extension, without the dot.
    public var preferredFilenameExtension: String? { tags[.filenameExtension]?.first }

    /// The preferred MIME type.
    public var preferredMIMEType: String? { tags[.mimeType]?.first }

    /// A description for people. Inherited depth-first, in declared conformance order, when the
    /// declaration has none; nil for dynamic types.
    public var localizedDescription: String? {
        guard case .declared(let index) = kind else { return nil }
        var seen = Set<Int32>()
        func find(_ i: Int32) -> String? {
            guard seen.insert(i).inserted else { return nil }
            if let text = database.entries[Int(i)].declared?.description { return text }
            if let comment = database.sharedMimeComment(of: i) { return comment }
            for parent in database.entries[Int(i)].parents { if let text = find(parent) { return text } }
            return nil
        }
        return find(index)
    }

    /// The declaration's reference URL (`UTTypeReferenceURL`).
    public var referenceURL: URL? {
        declaration?.referenceURL.flatMap { URL(string: $0) }
    }

    /// The declaration's version (`UTTypeVersion`).
    public var version: Int? { declaration?.version }

    // MARK: Protocols

    /// Types are equal when their identifiers are, ignoring case.
    public static func == (a: UTType, b: UTType) -> Bool {
        TypeIdentifier.key(a.identifier) == TypeIdentifier.key(b.identifier)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(TypeIdentifier.key(identifier)) }

    /// Whether this is ``folder`` (`public.folder`), told without looking the folder type up.
    package var isFolder: Bool { TypeIdentifier.key(identifier) == "public.folder" }

    /// The identifier.
    public var description: String { identifier }

    public var debugDescription: String {
        "\(identifier) (\(localizedDescription ?? (isDynamic ? "dynamic" : "undeclared")))"
    }
}

extension UTType: Codable {
    /// Decodes a type from its identifier; an unknown identifier decodes as an undeclared type.
    public init(from decoder: any Decoder) throws {
        let identifier = try decoder.singleValueContainer().decode(String.self)
        guard let type = UTType(identifier: identifier, allowUndeclared: true) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a type identifier: \(identifier)"))
        }
        self = type
    }

    /// Encodes the identifier.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(identifier)
    }
}
