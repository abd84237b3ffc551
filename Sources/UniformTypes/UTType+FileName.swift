import Synchronization

extension UTType {
    /// The type of a file by its name's extension, as `URL.pathExtension` finds one: the text after
    /// the last dot, unless that dot starts the name (".bashrc") or ends it; `.data` without an
    /// extension. Read as bytes, since listings and crawls ask it for every file they name.
    package static func ofFile(named name: String) -> UTType {
        let ext = extensionOfFile(named: name)
        let database = TypeRegistry.shared.database
        if let known = fileTypes.withLock({ $0.database === database ? $0.types[ext] : nil }) { return known }
        let type = ext.isEmpty ? .data : UTType(tag: ext, tagClass: .filenameExtension, conformingTo: .data, database: database) ?? .data
        fileTypes.withLock { cache in
            // Kept for the registry's current snapshot, and for a few hundred extensions at most.
            if cache.database !== database || cache.types.count >= 256 { cache = (database, [:]) }
            cache.types[ext] = type
        }
        return type
    }

    /// ``ofFile(named:)``'s types by extension, for one snapshot of the registry: an upload or a
    /// listed file asks for its type, and the lookup (the extension's tag, then `public.data`'s
    /// conformance) cost more than the rest of making its record.
    private static let fileTypes = Mutex<(database: TypeDatabase?, types: [String: UTType])>((nil, [:]))

    /// The type a regular file's name gives, as ``contentType(ofItemAt:)`` reads names (globs
    /// first, then declared extensions), and whether the name settles it. When it does not (no
    /// name pattern matches, several do, or only an undeclared extension), the type is the one
    /// ``ofFile(named:)`` gives, until the content is looked at.
    package static func named(_ name: String) -> (type: UTType, decided: Bool) {
        let database = TypeRegistry.shared.database
        let named = database.nameType(fileName: name, pathExtension: extensionOfFile(named: name))
        if named.decided, let index = named.index { return (UTType(index: index, database: database), true) }
        return (ofFile(named: name), false)
    }

    /// The extension `URL.pathExtension` finds in `name`: after the last dot, unless that dot
    /// starts or ends the name; empty for none.
    package static func extensionOfFile(named name: String) -> String {
        let bytes = name.utf8
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot != bytes.startIndex, bytes.index(after: dot) != bytes.endIndex else { return "" }
        return String(name[bytes.index(after: dot)...])
    }
}

/// The types of many files' names (a listing's), each extension looked up in the type database
/// once: ``UTType/ofFile(named:)`` depends on the extension alone, and a listing's files share
/// few of them.
package struct FileNameTypes {
    private var known: [String: UTType] = [:]

    package init() {}

    /// ``UTType/ofFile(named:)`` of `name`.
    package mutating func type(ofFile name: String) -> UTType {
        let ext = UTType.extensionOfFile(named: name)
        if let type = known[ext] { return type }
        let type = UTType.ofFile(named: name)
        known[ext] = type
        return type
    }
}
