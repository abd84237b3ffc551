/// `types.show`: the type a query names — an identifier, a filename extension or a MIME type.
package struct TypesShow: DaemonRequest {
    package static let method = "types.show"
    package typealias Reply = TypeDescription

    /// The identifier, extension or MIME type.
    package var type: String

    package init(type: String) { self.type = type }

    package func validate() throws(CoordinationFailure) {
        try WireCheck.length(type, "params.type", limit: 1024)
    }
}

/// `types.of`: the content type of the file at `path` (its extension, then its content).
package struct TypesOf: DaemonRequest {
    package static let method = "types.of"
    package typealias Reply = TypeDescription

    /// An absolute path.
    package var path: ClientPath

    package init(path: String) { self.path = ClientPath(path) }

    package func validate() throws(CoordinationFailure) {
        try WireCheck.absolutePath(path.text, "params.path")
    }
}

/// What the daemon says of a type.
package struct TypeDescription: Codable, Sendable, Equatable {
    package var identifier: String
    package var declared: Bool
    package var dynamic: Bool
    package var mimeType: String?
    package var filenameExtension: String?
    package var description: String?
    /// The supertypes, nearest first.
    package var supertypes: [String]
    /// How the type was found (`types.of` only): the extension or the content.
    package var source: String?

    package init(
        identifier: String, declared: Bool, dynamic: Bool, mimeType: String? = nil, filenameExtension: String? = nil,
        description: String? = nil, supertypes: [String] = [], source: String? = nil
    ) {
        self.identifier = identifier
        self.declared = declared
        self.dynamic = dynamic
        self.mimeType = mimeType
        self.filenameExtension = filenameExtension
        self.description = description
        self.supertypes = supertypes
        self.source = source
    }
}
