import Folio
import Foundation

/// One resource of a WebDAV `207 Multi-Status` reply to PROPFIND.
struct DAVResource: Equatable, Sendable {
    /// The `href`, as the server sent it (percent-encoded, absolute path or URL).
    var href: String
    /// Whether `resourcetype` holds `collection`.
    var isCollection = false
    /// `getetag`, as sent (possibly weak: `W/"…"`).
    var etag: String?
    /// `getcontentlength`.
    var contentLength: Int64?
    /// `getlastmodified` (an RFC 1123 date).
    var lastModified: String?
    /// `getcontenttype`.
    var contentType: String?
}

/// Why a multistatus body was refused.
struct MultistatusError: Error, CustomStringConvertible, Equatable {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A bounded parser of PROPFIND replies: just enough XML for `multistatus` (elements, attributes,
/// namespaces, the five entities and character references, CDATA, comments), and nothing a server
/// could abuse: no DTD (so no entity expansion or external entities), at most 32 levels, a cap on
/// the resources and on every text. A body that breaks a rule is refused whole, so a damaged
/// listing can never look like a shorter one.
struct MultistatusParser {
    static let maximumDepth = 32
    static let maximumText = 64 << 10
    static let maximumResources = 200_000

    private let bytes: [UInt8]
    private var index = 0
    private var namespaces: [[String: String]] = [[:]]
    /// The open elements, as (namespace, local name).
    private var open: [(String, String)] = []
    private var resources: [DAVResource] = []
    private var current: DAVResource?
    /// The properties of the propstat being read, applied if its status is 200.
    private var pending = DAVResource(href: "")
    private var pendingStatus: Int?
    private var text: [UInt8] = []

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The resources of a multistatus body.
    static func parse(_ bytes: [UInt8]) throws(MultistatusError) -> [DAVResource] {
        var parser = MultistatusParser(bytes)
        try parser.run()
        return parser.resources
    }

    private mutating func run() throws(MultistatusError) {
        var sawRoot = false
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "<") {
                if starts("<?") {
                    try skip(past: "?>")
                } else if starts("<!--") {
                    try skip(past: "-->")
                } else if starts("<![CDATA[") {
                    index += 9
                    let start = index
                    try skip(past: "]]>")
                    try appendText(bytes[start..<(index - 3)])
                } else if starts("<!") {
                    throw MultistatusError("a document type or declaration (refused: no DTDs)")
                } else if starts("</") {
                    try closeTag()
                } else {
                    if open.isEmpty {
                        guard !sawRoot else { throw MultistatusError("a second root element") }
                        sawRoot = true
                    }
                    try openTag()
                }
            } else {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
                if open.isEmpty {
                    guard bytes[start..<index].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }) else {
                        throw MultistatusError("text outside the root element")
                    }
                } else {
                    try appendDecoded(bytes[start..<index])
                }
            }
        }
        guard sawRoot, open.isEmpty else { throw MultistatusError("the document ends inside an element") }
    }

    // MARK: Tags

    private mutating func openTag() throws(MultistatusError) {
        index += 1
        let name = try readName()
        var attributes: [(String, String)] = []
        var selfClosing = false
        while true {
            skipSpace()
            guard index < bytes.count else { throw MultistatusError("the document ends inside a tag") }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                break
            }
            if starts("/>") {
                index += 2
                selfClosing = true
                break
            }
            let attribute = try readName()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw MultistatusError("an attribute without a value") }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw MultistatusError("an attribute value without quotes")
            }
            let quote = bytes[index]
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != quote {
                guard bytes[index] != UInt8(ascii: "<") else { throw MultistatusError("“<” in an attribute value") }
                index += 1
            }
            guard index < bytes.count else { throw MultistatusError("the document ends inside an attribute") }
            let value = try decode(bytes[start..<index])
            index += 1
            attributes.append((attribute, value))
        }
        var scope = namespaces.last!
        for (attribute, value) in attributes {
            if attribute == "xmlns" { scope[""] = value } else if attribute.hasPrefix("xmlns:") { scope[String(attribute.dropFirst(6))] = value }
        }
        guard open.count < Self.maximumDepth else { throw MultistatusError("elements nested deeper than \(Self.maximumDepth)") }
        namespaces.append(scope)
        let resolved = try resolve(name, in: scope)
        open.append(resolved)
        text.removeAll(keepingCapacity: true)
        try began(resolved)
        if selfClosing { try endElement() }
    }

    private mutating func closeTag() throws(MultistatusError) {
        index += 2
        let name = try readName()
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw MultistatusError("a malformed end tag") }
        index += 1
        guard let top = open.last, try resolve(name, in: namespaces.last!) == top else {
            throw MultistatusError("an end tag </\(name)> that does not match")
        }
        try endElement()
    }

    private mutating func endElement() throws(MultistatusError) {
        let element = open.removeLast()
        namespaces.removeLast()
        try ended(element, text: text)
        text.removeAll(keepingCapacity: true)
    }

    private func resolve(_ name: String, in scope: [String: String]) throws(MultistatusError) -> (String, String) {
        if let colon = name.firstIndex(of: ":") {
            let prefix = String(name[..<colon])
            guard let namespace = scope[prefix] else { throw MultistatusError("an undeclared namespace prefix “\(prefix)”") }
            return (namespace, String(name[name.index(after: colon)...]))
        }
        return (scope[""] ?? "", name)
    }

    // MARK: Meaning

    private mutating func began(_ element: (String, String)) throws(MultistatusError) {
        guard element.0 == "DAV:" else { return }
        switch element.1 {
        case "response":
            current = DAVResource(href: "")
        case "propstat":
            pending = DAVResource(href: "")
            pendingStatus = nil
        case "collection" where open.dropLast().last.map { $0 == ("DAV:", "resourcetype") } == true:
            pending.isCollection = true
        default:
            break
        }
    }

    private mutating func ended(_ element: (String, String), text: [UInt8]) throws(MultistatusError) {
        guard element.0 == "DAV:" else { return }
        let value = String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let parent = open.last
        // A property asked for and not found is listed empty in a 404 propstat.
        if value.isEmpty, ["getetag", "getcontentlength", "getlastmodified", "getcontenttype"].contains(element.1) { return }
        switch element.1 {
        case "href" where parent.map { $0 == ("DAV:", "response") } == true:
            current?.href = value
        case "status" where parent.map { $0 == ("DAV:", "propstat") } == true:
            let parts = value.split(separator: " ")
            pendingStatus = parts.count >= 2 ? Int(parts[1]) : nil
        case "getetag": pending.etag = value
        case "getcontentlength":
            guard let length = Int64(value), length >= 0 else { throw MultistatusError("a content length “\(value.prefix(40))”") }
            pending.contentLength = length
        case "getlastmodified": pending.lastModified = value
        case "getcontenttype": pending.contentType = value
        case "propstat":
            if pendingStatus == 200, var resource = current {
                resource.isCollection = resource.isCollection || pending.isCollection
                resource.etag = pending.etag ?? resource.etag
                resource.contentLength = pending.contentLength ?? resource.contentLength
                resource.lastModified = pending.lastModified ?? resource.lastModified
                resource.contentType = pending.contentType ?? resource.contentType
                current = resource
            }
        case "response":
            guard let resource = current, !resource.href.isEmpty else { throw MultistatusError("a response without an href") }
            guard resources.count < Self.maximumResources else { throw MultistatusError("more than \(Self.maximumResources) resources") }
            resources.append(resource)
            current = nil
        default:
            break
        }
    }

    // MARK: Text

    private mutating func appendDecoded(_ raw: ArraySlice<UInt8>) throws(MultistatusError) {
        try appendText(ArraySlice(Array(try decode(raw).utf8)))
    }

    private mutating func appendText(_ raw: ArraySlice<UInt8>) throws(MultistatusError) {
        guard text.count + raw.count <= Self.maximumText else { throw MultistatusError("a text longer than \(Self.maximumText) bytes") }
        text.append(contentsOf: raw)
    }

    /// `raw` with entities and character references decoded (``XMLEntities``); unknown ones are refused.
    private func decode(_ raw: ArraySlice<UInt8>) throws(MultistatusError) -> String {
        do {
            return try XMLEntities.decode(raw)
        } catch {
            throw MultistatusError(error.reason)
        }
    }

    // MARK: Scanning

    private func starts(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return literal.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
    }

    private mutating func skip(past literal: StaticString) throws(MultistatusError) {
        while index < bytes.count {
            if starts(literal) {
                index += literal.utf8CodeUnitCount
                return
            }
            index += 1
        }
        throw MultistatusError("the document ends before “\(literal)”")
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
    }

    private mutating func readName() throws(MultistatusError) -> String {
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: "=")
            {
                break
            }
            index += 1
        }
        guard index > start, index - start <= 256, let name = String(validating: bytes[start..<index], as: UTF8.self) else {
            throw MultistatusError("a missing or malformed name")
        }
        return name
    }
}
