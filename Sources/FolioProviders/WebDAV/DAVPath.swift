import Foundation

/// Paths on a WebDAV server, relative to the provider's base: decoding the `href`s of a listing
/// (which a hostile server controls) and encoding paths for requests.
enum DAVPath {
    /// The path relative to `basePath` (decoded, no leading or trailing slash; "" for the base
    /// itself) of `href`, or nil when the href is outside the base or names something no file system
    /// here can hold (`..`, `.`, empty segments, NUL, invalid percent-encoding or UTF-8).
    ///
    /// A full URL must name the server of the base (`origin`: scheme, host and port).
    static func relative(_ href: String, basePath: String, origin: String? = nil) -> String? {
        var path = href
        if let schemeEnd = path.range(of: "://") {
            guard let slash = path[schemeEnd.upperBound...].firstIndex(of: "/") else { return nil }
            guard let origin, path[..<slash].lowercased() == origin.lowercased() else { return nil }
            path = String(path[slash...])
        }
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<query]) }
        guard let decoded = decode(path), let base = decode(basePath) else { return nil }
        let baseSegments = base.split(separator: "/", omittingEmptySubsequences: true)
        var segments = decoded.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if segments.first == "" { segments.removeFirst() }
        if segments.last == "" { segments.removeLast() }
        guard segments.count >= baseSegments.count, zip(segments, baseSegments).allSatisfy({ $0.utf8.elementsEqual($1.utf8) }) else { return nil }
        let rest = segments.dropFirst(baseSegments.count)
        for segment in rest {
            guard !segment.isEmpty, segment != ".", segment != "..", !segment.utf8.contains(0), segment.utf8.count <= 255 else { return nil }
        }
        return rest.joined(separator: "/")
    }

    /// Percent-decodes `text` into UTF-8, or nil when it is not valid.
    static func decode(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(), let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else {
                    return nil
                }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `relative` percent-encoded for a request path (every byte but unreserved characters and `/`).
    static func encode(_ relative: String) -> String {
        var out = ""
        for byte in relative.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }
}
