/// The encoding of dynamic type identifiers (`dyn.a…`).
///
/// A dynamic identifier is `dyn.a` followed by a base-32 encoding (alphabet
/// `abcdefghkmnpqrstuvwxyz0123456789`, most significant bit first) of a tag specification such as
/// `?0=6:1=sql`: key `0` is the conformance, `1` a filename extension, `3` a MIME type, and short
/// codes stand for common identifiers (`6` public.data). This matches Apple's observed encoding
/// (`?0=6:1=sql` → `dyn.ah62d4rv4ge81g6pq`), which Apple documents as opaque: dynamic identifiers
/// must not be persisted or sent to other systems.
enum DynamicTypeCoding {
    /// What a dynamic identifier says: the tag it was made for and what it conforms to.
    struct Specification: Sendable, Hashable {
        var conformsTo: [String]
        var tags: [UTTagClass: [String]]
    }

    static let prefix = "dyn.a"
    private static let alphabet = Array("abcdefghkmnpqrstuvwxyz0123456789".utf8)
    private static let decodeTable: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    private static let classCodes: [(String, String)] = [
        ("0", "UTTypeConformsTo"), ("1", UTTagClass.filenameExtension.rawValue), ("2", "com.apple.ostype"),
        ("3", UTTagClass.mimeType.rawValue), ("4", "com.apple.nspboard-type"), ("5", "public.url-scheme"),
    ]
    private static let valueCodes: [(String, String)] = [
        ("6", "public.data"), ("7", "public.text"), ("8", "public.plain-text"),
        ("9", "public.utf16-plain-text"), ("E", "public.directory"), ("F", "public.folder"),
    ]

    /// Returns the dynamic identifier for a tag of `tagClass` conforming to `conformsTo`.
    static func identifier(tag: String, tagClass: UTTagClass, conformsTo: String) -> String {
        let classCode = classCodes.first { $0.1 == tagClass.rawValue }?.0 ?? escape(tagClass.rawValue)
        let conformance = valueCodes.first { $0.1 == conformsTo }?.0 ?? escape(conformsTo)
        let spec = "?0=\(conformance):\(classCode)=\(escape(tag))"
        return prefix + encode(Array(spec.utf8))
    }

    /// Decodes a dynamic identifier; nil when it is not one or is malformed.
    static func specification(of identifier: String) -> Specification? {
        guard identifier.utf8.count <= TypeIdentifier.maximumLength * 2,
            identifier.lowercased().hasPrefix(prefix)
        else { return nil }
        let body = identifier.utf8.dropFirst(prefix.utf8.count)
        guard let bytes = decode(body), let text = String(validating: bytes, as: UTF8.self),
            text.first == "?"
        else { return nil }
        var spec = Specification(conformsTo: [], tags: [:])
        for pair in split(text.dropFirst(), on: ":") {
            let parts = split(pair, on: "=")
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
            let key = classCodes.first { $0.0 == parts[0] }?.1 ?? parts[0]
            let values = split(parts[1], on: ",").map { value in valueCodes.first { $0.0 == value }?.1 ?? value }
            if key == "UTTypeConformsTo" {
                spec.conformsTo += values
            } else {
                spec.tags[UTTagClass(rawValue: key), default: []] += values
            }
        }
        guard !spec.tags.isEmpty else { return nil }
        if spec.conformsTo.isEmpty { spec.conformsTo = ["public.data"] }
        return spec
    }

    private static func escape(_ value: String) -> String {
        var out = ""
        for c in value {
            if c == ":" || c == "=" || c == "," || c == "\\" { out.append("\\") }
            out.append(c)
        }
        return out
    }

    /// Splits on an unescaped separator, removing the escapes.
    private static func split(_ text: some StringProtocol, on separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var escaped = false
        for c in text {
            if escaped {
                current.append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == separator {
                parts.append(current)
                current = ""
            } else {
                current.append(c)
            }
        }
        parts.append(current)
        return parts
    }

    private static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    private static func decode(_ chars: some Collection<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for c in chars {
            let value = decodeTable[Int(c)]
            guard value >= 0 else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }
}
