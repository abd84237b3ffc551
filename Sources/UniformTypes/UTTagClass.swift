/// A class of tags that identify a type in another classification system (Apple's `UTTagClass`).
public struct UTTagClass: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The tag class's identifier, such as `public.filename-extension`.
    public let rawValue: String

    /// Creates a tag class from its identifier.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Filename extensions, without the leading dot (`public.filename-extension`).
    public static let filenameExtension = UTTagClass(rawValue: "public.filename-extension")
    /// MIME types (`public.mime-type`).
    public static let mimeType = UTTagClass(rawValue: "public.mime-type")

    /// The tag classes a declaration may carry; others are dropped, as on Apple's systems.
    static let standard: [UTTagClass] = [.filenameExtension, .mimeType]

    /// Returns the tag written the way the database indexes it: lowercased, with no surrounding spaces.
    func normalize(_ tag: String) -> String { tag.trimmedTag().asciiLowercased() }

    /// The class's description.
    public var description: String { rawValue }
}

extension String {
    func trimmingSpaces() -> Substring {
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
        }
        let utf8 = self.utf8
        guard let first = utf8.first, let last = utf8.last, isSpace(first) || isSpace(last) else { return self[...] }
        guard let start = utf8.firstIndex(where: { !isSpace($0) }) else { return self[endIndex...] }
        let end = utf8.lastIndex(where: { !isSpace($0) })!
        return self[start...end]
    }
}

extension String {
    /// The tag without surrounding spaces; the string itself when it has none.
    func trimmedTag() -> String {
        let trimmed = trimmingSpaces()
        return trimmed.startIndex == startIndex && trimmed.endIndex == endIndex ? self : String(trimmed)
    }
}

extension Substring {
    func lowercased() -> String { String(self).lowercased() }
}
