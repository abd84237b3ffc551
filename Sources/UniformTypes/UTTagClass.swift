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
    func normalize(_ tag: String) -> String { tag.trimmingSpaces().lowercased() }

    /// The class's description.
    public var description: String { rawValue }
}

extension String {
    func trimmingSpaces() -> Substring {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s.removeLast() }
        return s
    }
}

extension Substring {
    func lowercased() -> String { String(self).lowercased() }
}
