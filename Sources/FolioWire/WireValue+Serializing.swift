extension WireValue {
    /// The value as compact JSON, with no newline: one frame's body.
    package func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(into: &out)
        return out
    }

    /// Appends the value as compact JSON. Object members are written in key order, so equal values
    /// give equal bytes.
    package func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isFinite { out.append(contentsOf: "\(d)".utf8) } else { out.append(contentsOf: "null".utf8) }
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The length of ``serialized()``, counted without building it (no bytes, no sorted keys):
    /// for budgets that weigh many values (the arbiter's status).
    package var serializedCount: Int {
        switch self {
        case .null: 4
        case .bool(let b): b ? 4 : 5
        case .int(let i): String(i).utf8.count
        case .double(let d): d.isFinite ? "\(d)".utf8.count : 4
        case .string(let s): Self.stringCount(s)
        case .array(let items): items.reduce(items.isEmpty ? 2 : 1 + items.count) { $0 + $1.serializedCount }
        case .object(let members): members.reduce(members.isEmpty ? 2 : 1 + members.count) { $0 + Self.stringCount($1.key) + 1 + $1.value.serializedCount }
        }
    }

    /// The length of a string written by ``writeString(_:into:)``.
    static func stringCount(_ string: String) -> Int {
        var count = 2
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): count += 2
            case 0..<0x20: count += 6
            default: count += 1
            }
        }
        return count
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (paths, names, methods) need no escape: copied in one go.
        let copied: Bool? = string.utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
