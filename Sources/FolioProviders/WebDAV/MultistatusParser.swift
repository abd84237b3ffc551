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

    mutating func began(_ element: XMLName, within parent: XMLName?) throws(XMLRefusal) {
        guard element.namespace == "DAV:" else { return }
        switch element.local {
        case "response":
            current = DAVResource(href: "")
        case "propstat":
            pending = DAVResource(href: "")
            pendingStatus = nil
        case "collection" where parent == XMLName(namespace: "DAV:", local: "resourcetype"):
            pending.isCollection = true
        default:
            break
        }
    }

    mutating func ended(_ element: XMLName, within parent: XMLName?, text: String) throws(XMLRefusal) {
        let value = Self.trimmed(text)
        if element == XMLName(namespace: "http://apache.org/dav/props/", local: "executable"), !value.isEmpty {
            pending.isExecutable = value == "T"
            return
        }
        guard element.namespace == "DAV:" else { return }
        // A property asked for and not found is listed empty in a 404 propstat.
        if value.isEmpty, ["getetag", "getcontentlength", "getlastmodified", "getcontenttype"].contains(element.local) { return }
        switch element.local {
        case "href" where parent == XMLName(namespace: "DAV:", local: "response"):
            current?.href = value
        case "status" where parent == XMLName(namespace: "DAV:", local: "propstat"):
            let parts = value.split(separator: " ")
            pendingStatus = parts.count >= 2 ? Int(parts[1]) : nil
        case "getetag": pending.etag = value
        case "getcontentlength":
            guard let length = Int64(value), length >= 0 else { throw XMLRefusal("a content length “\(value.prefix(40))”") }
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
