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
    /// Apache's `executable` (`http://apache.org/dav/props/`): whether the file's owner may run it.
    var isExecutable: Bool?
}

/// A reader of PROPFIND replies (through ``BoundedXMLReader``, which refuses DTDs, deep nesting and
/// long texts), with a cap on the resources: a body that breaks a rule is refused whole, so a damaged
/// listing can never look like a shorter one.
struct MultistatusParser: BoundedXMLHandler {
    static let maximumResources = 200_000

    private var resources: [DAVResource] = []
    private var current: DAVResource?
    /// The properties of the propstat being read, applied if its status is 200.
    private var pending = DAVResource(href: "")
    private var pendingStatus: Int?

    /// The resources of a multistatus body.
    static func parse(_ bytes: [UInt8]) throws(XMLRefusal) -> [DAVResource] {
        try BoundedXMLReader.read(bytes, into: MultistatusParser()).resources
    }

    private static let resourceType = XMLName(namespace: "DAV:", local: "resourcetype")
    private static let response = XMLName(namespace: "DAV:", local: "response")
    private static let propstat = XMLName(namespace: "DAV:", local: "propstat")
    private static let executable = XMLName(namespace: "http://apache.org/dav/props/", local: "executable")

    mutating func began(_ element: XMLName, within parent: XMLName?) throws(XMLRefusal) {
        guard element.namespace == "DAV:" else { return }
        switch element.local {
        case "response":
            current = DAVResource(href: "")
        case "propstat":
            pending = DAVResource(href: "")
            pendingStatus = nil
        case "collection" where parent == Self.resourceType:
            pending.isCollection = true
        default:
            break
        }
    }

    mutating func ended(_ element: XMLName, within parent: XMLName?, text: String) throws(XMLRefusal) {
        let value = Self.trimmed(text)
        guard element.namespace == "DAV:" else {
            if element == Self.executable, !value.isEmpty { pending.isExecutable = value == "T" }
            return
        }
        switch element.local {
        case "href" where parent == Self.response:
            current?.href = value
        case "status" where parent == Self.propstat:
            pendingStatus = Self.statusCode(value)
        // A property asked for and not found is listed empty in a 404 propstat.
        case "getetag" where !value.isEmpty: pending.etag = value
        case "getcontentlength" where !value.isEmpty:
            guard let length = Int64(value), length >= 0 else { throw XMLRefusal("a content length “\(value.prefix(40))”") }
            pending.contentLength = length
        case "getlastmodified" where !value.isEmpty: pending.lastModified = value
        case "getcontenttype" where !value.isEmpty: pending.contentType = value
        case "propstat":
            if pendingStatus == 200, var resource = current {
                resource.isCollection = resource.isCollection || pending.isCollection
                resource.etag = pending.etag ?? resource.etag
                resource.contentLength = pending.contentLength ?? resource.contentLength
                resource.lastModified = pending.lastModified ?? resource.lastModified
                resource.contentType = pending.contentType ?? resource.contentType
                resource.isExecutable = pending.isExecutable ?? resource.isExecutable
                current = resource
            }
        case "response":
            guard let resource = current, !resource.href.isEmpty else { throw XMLRefusal("a response without an href") }
            guard resources.count < Self.maximumResources else { throw XMLRefusal("more than \(Self.maximumResources) resources") }
            resources.append(resource)
            current = nil
        default:
            break
        }
    }

    /// The code of a status line (`HTTP/1.1 200 OK`): the second of its words separated by spaces,
    /// or nil when that is not a number.
    static func statusCode(_ line: String) -> Int? {
        let bytes = line.utf8
        guard let space = bytes.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        var rest = bytes[bytes.index(after: space)...]
        while rest.first == UInt8(ascii: " ") { rest = rest.dropFirst() }
        return Int(Substring(rest.prefix { $0 != UInt8(ascii: " ") }))
    }

    /// `text` without XML's white space (space, tab, CR, LF) at either end: read as bytes, since
    /// Foundation's trimming bridges to NSString for each element of a listing.
    static func trimmed(_ text: String) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        var bytes = Substring(text).utf8[...]
        // Most texts have no white space around them (hrefs, tags, dates): kept as they are.
        guard let first = bytes.first, let last = bytes.last, isSpace(first) || isSpace(last) else { return text }
        while let first = bytes.first, isSpace(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isSpace(last) { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }
}
