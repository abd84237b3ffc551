package import Foundation

/// The contents of bookmark data (`URL.bookmarkData`): where the item was, how to recognise it after
/// a rename (identity, device and inode), the resource values stored with it and the options, signed.
///
/// Layout: `FBK1`, a 4-byte little-endian length, that many bytes of JSON, then a 32-byte
/// HMAC-SHA256 of everything before it. Anything else — a truncated, edited or forged blob — is
/// refused before its JSON is even read.
package struct Bookmark: Sendable, Equatable {
    package var path: String
    /// The base a relative bookmark was made against (`relativeTo:`), and the path relative to it.
    package var relativePath: String?
    package var identity: String
    package var device: UInt64
    package var inode: UInt64
    package var isDirectory: Bool
    package var created: Double
    package var options: UInt
    package var values: [String: WireValue]
    /// The app that made it through the daemon (nil: the user's own tools, or no daemon). As on
    /// Apple's systems, a security-scoped bookmark is its app's: another app cannot resolve it or
    /// read its values.
    package var app: String?

    /// Where the item was and how to recognise it.
    package var reference: ItemReference { ItemReference(path: path, identity: identity, device: device, inode: inode) }

    static let magic = Array("FBK1".utf8)
    static let maximumPayload = 64 << 10

    /// The signed bytes.
    package func encoded(key: BookmarkKey) -> Data {
        var object: [String: WireValue] = [
            "v": 1, "path": .string(path), "identity": .string(identity), "dev": .int(Int64(bitPattern: device)),
            "ino": .int(Int64(bitPattern: inode)), "dir": .bool(isDirectory), "created": .double(created),
            "options": .int(Int64(options)), "values": .object(values),
        ]
        if let relativePath { object["relative"] = .string(relativePath) }
        if let app { object["app"] = .string(app) }
        let payload = WireValue.object(object).serialized()
        var bytes = Self.magic
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes += payload
        bytes += key.signature(of: bytes)
        return Data(bytes)
    }

    /// Checks the signature and the fields.
    ///
    /// - Throws: `CocoaError.fileReadCorruptFile` for anything not made, unchanged, by this user's key.
    package init(decoding data: Data, key: BookmarkKey) throws {
        let bytes = [UInt8](data)
        func refuse(_ why: String) -> CocoaError {
            CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "not valid bookmark data: \(why)"])
        }
        guard bytes.count >= 8 + 32, Array(bytes[0..<4]) == Self.magic else { throw refuse("unknown format") }
        let length = Int(UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24)
        guard length <= Self.maximumPayload, bytes.count == 8 + length + 32 else { throw refuse("truncated or padded") }
        guard key.isValid(bytes[(8 + length)...], for: bytes[..<(8 + length)]) else {
            throw refuse("the signature does not match (edited, forged, or made by another user)")
        }
        let value: WireValue
        do { value = try WireValue(parsing: bytes[8..<(8 + length)]) } catch { throw refuse("\(error)") }
        guard value["v"]?.intValue == 1, let path = value["path"]?.stringValue, path.hasPrefix("/"),
            let identity = value["identity"]?.stringValue, DocumentIdentity.isValid(identity),
            let device = value["dev"]?.intValue, let inode = value["ino"]?.intValue,
            let options = value["options"]?.intValue, options >= 0
        else { throw refuse("missing fields") }
        self.path = path
        relativePath = value["relative"]?.stringValue
        self.identity = identity
        self.device = UInt64(bitPattern: device)
        self.inode = UInt64(bitPattern: inode)
        isDirectory = value["dir"]?.boolValue ?? false
        created = value["created"].flatMap { if case .double(let d) = $0 { d } else { $0.intValue.map(Double.init) } } ?? 0
        self.options = UInt(options)
        values = value["values"]?.objectValue ?? [:]
        switch value["app"] {
        case nil, .null?: app = nil
        case .string(let owner)? where WireCheck.isValidApp(owner): app = owner
        default: throw refuse("a malformed app")
        }
    }

    package init(
        path: String, relativePath: String?, identity: String, device: UInt64, inode: UInt64, isDirectory: Bool, created: Double,
        options: UInt, values: [String: WireValue], app: String? = nil
    ) {
        self.path = path
        self.relativePath = relativePath
        self.identity = identity
        self.device = device
        self.inode = inode
        self.isDirectory = isDirectory
        self.created = created
        self.options = options
        self.values = values
        self.app = app
    }
}
