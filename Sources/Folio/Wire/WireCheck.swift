/// The checks typed requests' `validate()` share, with the wire's limits and messages.
package enum WireCheck {
    /// At most `limit` bytes of UTF-8.
    package static func length(_ text: String, _ name: String, limit: Int) throws(CoordinationFailure) {
        guard text.utf8.count <= limit else { throw CoordinationWire.invalid("\(name) is longer than \(limit) bytes") }
    }

    /// An absolute path of at most PATH_MAX bytes, without NUL.
    package static func absolutePath(_ path: String, _ name: String) throws(CoordinationFailure) {
        try length(path, name, limit: CoordinationWire.maximumPathBytes)
        guard path.hasPrefix("/") else { throw CoordinationWire.invalid("\(name) must be an absolute path") }
        guard !path.utf8.contains(0) else { throw CoordinationWire.invalid("\(name) contains a NUL byte") }
    }

    /// An absolute path, checked as `absolutePath` and normalized.
    package static func normalizedPath(_ path: String, _ name: String) throws(CoordinationFailure) -> String {
        try absolutePath(path, name)
        return CoordinationPath.normalize(path)
    }

    /// A result limit: absent, or 1 to 100,000.
    package static func limit(_ limit: Int?) throws(CoordinationFailure) {
        guard let limit else { return }
        guard limit > 0, limit <= 100_000 else { throw CoordinationWire.invalid("params.limit must be 1 to 100000") }
    }
}

extension WireCheck {
    /// Whether `text` is an app identifier: reverse DNS (letters, digits, '-' and '.'), at most 255 bytes.
    package static func isValidApp(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= 255, text.contains("."), !text.hasPrefix("."), !text.hasSuffix("."),
            !text.contains("..")
        else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
    }

    /// An app identifier (`isValidApp`).
    package static func app(_ text: String, _ name: String) throws(CoordinationFailure) {
        guard isValidApp(text) else {
            throw CoordinationWire.invalid("\(name) must be an app identifier (reverse DNS: letters, digits, '-' and '.')")
        }
    }

    /// An optional absolute path, checked as `absolutePath` and normalized when present.
    package static func optionalNormalizedPath(_ path: String?, _ name: String) throws(CoordinationFailure) -> String? {
        guard let path else { return nil }
        return try normalizedPath(path, name)
    }

    /// At most `limit` strings (`what`: what they are, for the error) of at most `each` bytes.
    package static func strings(_ list: [String], _ name: String, limit: Int, each: Int, what: String = "names") throws(CoordinationFailure) {
        guard list.count <= limit else { throw CoordinationWire.invalid("\(name) must hold at most \(limit) \(what)") }
        for (index, text) in list.enumerated() { try length(text, "\(name)[\(index)]", limit: each) }
    }

    /// At most `limit` absolute paths, each checked as `absolutePath` and normalized.
    package static func normalizedPaths(_ paths: [String], _ name: String, limit: Int) throws(CoordinationFailure) -> [String] {
        guard paths.count <= limit else { throw CoordinationWire.invalid("\(name) must hold at most \(limit) paths") }
        var normalized: [String] = []
        normalized.reserveCapacity(paths.count)
        for (index, path) in paths.enumerated() { normalized.append(try normalizedPath(path, "\(name)[\(index)]")) }
        return normalized
    }
}
