import FolioSystem
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
        // Read as bytes: a listing takes this for every item it names.
        var path = Substring(href).utf8[...]
        let slash = UInt8(ascii: "/")
        if let scheme = start(of: "://", in: path) {
            guard let first = path[path.index(scheme, offsetBy: 3)...].firstIndex(of: slash) else { return nil }
            guard let origin, String(Substring(path[..<first])).lowercased() == origin.lowercased() else { return nil }
            path = path[first...]
        }
        if let query = path.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { path = path[..<query] }
        // Most hrefs begin with the base's very bytes: only the rest is decoded and split. (A base
        // with escapes or empty segments is compared decoded, segment by segment, below.)
        if isPlain(basePath), path.starts(with: basePath.utf8) {
            return decodedBytes(path.dropFirst(basePath.utf8.count)).flatMap(checked)
        }
        guard let decoded = decodedBytes(path), let base = decodedBytes(basePath.utf8[...]) else { return nil }
        let baseSegments = base.split(separator: slash, omittingEmptySubsequences: true)
        var segments = decoded.split(separator: slash, omittingEmptySubsequences: false)[...]
        if segments.first?.isEmpty == true { segments.removeFirst() }
        if segments.last?.isEmpty == true { segments.removeLast() }
        guard segments.count >= baseSegments.count, zip(segments, baseSegments).allSatisfy({ $0.elementsEqual($1) }) else { return nil }
        return joined(segments.dropFirst(baseSegments.count))
    }

    /// Whether `basePath` begins and ends with `/` and holds no escape and no empty segment: its
    /// bytes are then the only ones that decode to it, segment by segment.
    private static func isPlain(_ basePath: String) -> Bool {
        var basePath = basePath
        return basePath.withUTF8 { bytes in
            guard bytes.first == UInt8(ascii: "/"), bytes.last == UInt8(ascii: "/") else { return false }
            var previous: UInt8 = 0
            for byte in bytes {
                if byte == UInt8(ascii: "%") || (byte == UInt8(ascii: "/") && previous == byte) { return false }
                previous = byte
            }
            return true
        }
    }

    /// The segments below the base joined by `/`, or nil when one names what no file system here
    /// can hold (empty, `.`, `..`, NUL, longer than 255 bytes).
    private static func joined(_ rest: ArraySlice<ArraySlice<UInt8>>) -> String? {
        guard rest.allSatisfy(isHoldable) else { return nil }
        return String(decoding: Array(rest.joined(separator: [UInt8(ascii: "/")])), as: UTF8.self)
    }

    /// The decoded path below the base, `rest`, as ``joined(_:)`` gives it once split at its
    /// slashes (one trailing slash dropped), read in place: a listing takes this for every item.
    private static func checked(_ rest: [UInt8]) -> String? {
        guard !rest.isEmpty else { return "" }
        let slash = UInt8(ascii: "/")
        let end = rest.last == slash ? rest.endIndex - 1 : rest.endIndex
        var start = rest.startIndex
        while true {
            let stop = rest[start..<end].firstIndex(of: slash) ?? end
            guard isHoldable(rest[start..<stop]) else { return nil }
            if stop == end { break }
            start = stop + 1
        }
        return String(decoding: rest[..<end], as: UTF8.self)
    }

    /// Whether a file system here can hold a file named `segment` (not empty, `.` or `..`, no NUL,
    /// at most 255 bytes).
    private static func isHoldable(_ segment: ArraySlice<UInt8>) -> Bool {
        let dot = UInt8(ascii: ".")
        switch segment.count {
        case 0: return false
        case 1 where segment.first == dot: return false
        case 2 where segment.first == dot && segment.last == dot: return false
        case 256...: return false
        default: return !segment.contains(0)
        }
    }

    /// Where `needle` (ASCII) first starts in `bytes`.
    private static func start(of needle: StaticString, in bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.Index? {
        let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if bytes[index...].starts(with: pattern) { return index }
            index = bytes.index(after: index)
        }
        return nil
    }

    /// The bytes `text` percent-decodes to, or nil when they are not valid UTF-8 or an escape is malformed.
    private static func decodedBytes(_ text: Substring.UTF8View.SubSequence) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var iterator = text.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexadecimalValue), let low = iterator.next().flatMap(hexadecimalValue) else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(validUTF8: bytes) == nil ? nil : bytes
    }

    /// The value of a hexadecimal digit.
    private static func hexadecimalValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
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
