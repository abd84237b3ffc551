/// Rules for the syntax of uniform type identifiers.
enum TypeIdentifier {
    /// The longest identifier accepted; real ones are far shorter.
    static let maximumLength = 255

    /// Returns whether `identifier` is syntactically a uniform type identifier: reverse-DNS labels of
    /// ASCII letters, digits and hyphens (or any non-ASCII character), separated by single dots.
    static func isValid(_ identifier: String) -> Bool {
        let utf8 = identifier.utf8
        guard !utf8.isEmpty, utf8.count <= maximumLength else { return false }
        var previousWasDot = true
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "."):
                if previousWasDot { return false }
                previousWasDot = true
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), 0x80...0xFF:
                previousWasDot = false
            default:
                return false
            }
        }
        return !previousWasDot
    }

    /// Returns the key identifiers are compared by: they are case-insensitive.
    static func key(_ identifier: String) -> String { identifier.asciiLowercased() }

    /// Whether the identifier is in the `public.` domain, reserved for the system.
    static func isPublic(_ identifier: String) -> Bool { hasPrefix(identifier, "public.") }

    /// Whether the identifier is a dynamic one.
    static func isDynamic(_ identifier: String) -> Bool { hasPrefix(identifier, "dyn.") }

    /// Compares a lowercase ASCII `prefix` with the start of `identifier`, ignoring ASCII case.
    private static func hasPrefix(_ identifier: String, _ prefix: StaticString) -> Bool {
        let utf8 = identifier.utf8
        guard utf8.count >= prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { p in
            zip(p, utf8).allSatisfy { a, b in a == (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") ? b | 0x20 : b) }
        }
    }
}
