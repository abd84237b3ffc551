extension TypeDatabase {
    /// What a regular file's name says of its type, read as ``UTType/contentType(ofItemAt:)`` reads
    /// it.
    struct NameType {
        /// The type the name gives: its one best glob or, without any glob, an extension a declared
        /// type claims (then `decided`); the first of several best globs otherwise; nil when the
        /// name says nothing.
        var index: Int32?
        /// Whether the name settles the type: the content is looked at only when it does not.
        var decided: Bool
        /// The MIME types of the name's best globs (several when the name is ambiguous).
        var globbed: [String]
    }

    /// The name step of content detection: shared-mime-info's globs, then a declared type's
    /// extension. `pathExtension` is the name's extension as `URL.pathExtension` finds it.
    func nameType(fileName name: String, pathExtension ext: String) -> NameType {
        let globbed = globs.mimeTypes(forFileName: name)
        if globbed.count == 1, let index = index(forMimeType: globbed[0]) {
            return NameType(index: index, decided: true, globbed: globbed)
        }
        if globbed.isEmpty, !ext.isEmpty,
            let index = indexes(forTag: ext, tagClass: .filenameExtension).first(where: { entries[Int($0)].origin != .sharedMimeInfo })
        {
            return NameType(index: index, decided: true, globbed: globbed)
        }
        return NameType(index: globbed.first.flatMap { index(forMimeType: $0) }, decided: false, globbed: globbed)
    }
}
