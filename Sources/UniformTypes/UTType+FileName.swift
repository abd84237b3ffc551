extension UTType {
    /// The type of a file by its name's extension, as `URL.pathExtension` finds one: the text after
    /// the last dot, unless that dot starts the name (".bashrc") or ends it; `.data` without an
    /// extension. Read as bytes, since listings and crawls ask it for every file they name.
    package static func ofFile(named name: String) -> UTType {
        let bytes = name.utf8
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot != bytes.startIndex, bytes.index(after: dot) != bytes.endIndex else { return .data }
        return UTType(filenameExtension: String(name[bytes.index(after: dot)...])) ?? .data
    }
}
