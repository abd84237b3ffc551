import Foundation

/// One object of an S3 listing.
struct S3Object: Equatable, Sendable {
    var key: String
    var etag: String?
    var size: Int64 = 0
    var lastModified: String?
}

/// One page of a `ListObjectsV2` reply.
struct S3ListPage: Equatable, Sendable {
    var objects: [S3Object] = []
    /// Common prefixes (with their trailing delimiter) when the listing was by delimiter.
    var prefixes: [String] = []
    var isTruncated = false
    var continuationToken: String?
}

/// A reader of `ListBucketResult` replies (through ``BoundedXMLReader``), with caps on entries and
/// keys: a reply that breaks a rule, or that says it is truncated without a token to go on, is
/// refused whole, so a damaged listing never looks like a shorter one.
struct ListBucketParser: BoundedXMLHandler {
    /// S3 returns at most 1,000 entries per page; a little slack for compatible servers.
    static let maximumEntries = 10_000
    /// S3 keys are at most 1,024 bytes.
    static let maximumKey = 1024

    private var page = S3ListPage()
    private var object: S3Object?
    private var sawRoot = false

    /// The page a `ListObjectsV2` body holds.
    static func parse(_ bytes: [UInt8]) throws(XMLRefusal) -> S3ListPage {
        let parser = try BoundedXMLReader.read(bytes, into: ListBucketParser())
        guard parser.sawRoot else { throw XMLRefusal("not a ListBucketResult") }
        if parser.page.isTruncated, parser.page.continuationToken?.isEmpty != false {
            throw XMLRefusal("a truncated listing without a continuation token")
        }
        return parser.page
    }

    mutating func began(_ element: XMLName, within parent: XMLName?) throws(XMLRefusal) {
        if parent == nil {
            guard element.local == "ListBucketResult" else { throw XMLRefusal("a <\(element.local)> reply instead of a listing") }
            sawRoot = true
        }
        if element.local == "Contents", parent?.local == "ListBucketResult" { object = S3Object(key: "") }
    }

    mutating func ended(_ element: XMLName, within parent: XMLName?, text: String) throws(XMLRefusal) {
        switch (parent?.local, element.local) {
        case ("Contents", "Key"):
            guard !text.isEmpty, text.utf8.count <= Self.maximumKey, !text.utf8.contains(0) else {
                throw XMLRefusal("an empty, overlong or NUL-bearing key")
            }
            object?.key = text
        case ("Contents", "ETag"): object?.etag = text
        case ("Contents", "Size"):
            guard let size = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)), size >= 0 else {
                throw XMLRefusal("a size “\(text.prefix(40))”")
            }
            object?.size = size
        case ("Contents", "LastModified"): object?.lastModified = text
        case ("ListBucketResult", "Contents"):
            guard let object, !object.key.isEmpty else { throw XMLRefusal("an object without a key") }
            try count()
            page.objects.append(object)
            self.object = nil
        case ("CommonPrefixes", "Prefix"):
            guard !text.isEmpty, text.utf8.count <= Self.maximumKey, !text.utf8.contains(0) else { throw XMLRefusal("an empty or overlong prefix") }
            try count()
            page.prefixes.append(text)
        case ("ListBucketResult", "IsTruncated"):
            page.isTruncated = text.trimmingCharacters(in: .whitespacesAndNewlines) == "true"
        case ("ListBucketResult", "NextContinuationToken"):
            guard text.utf8.count <= 4096 else { throw XMLRefusal("an overlong continuation token") }
            page.continuationToken = text
        default:
            break
        }
    }

    private func count() throws(XMLRefusal) {
        guard page.objects.count + page.prefixes.count < Self.maximumEntries else {
            throw XMLRefusal("more than \(Self.maximumEntries) entries in one page")
        }
    }
}

/// The `Code` and `Message` of an S3 `<Error>` reply (or of any reply, for what they are worth).
struct S3ErrorReply: BoundedXMLHandler {
    var code: String?
    var message: String?

    /// The error a body names, or an empty one when the body is not an S3 error.
    static func parse(_ bytes: [UInt8]) -> S3ErrorReply {
        (try? BoundedXMLReader.read(bytes, into: S3ErrorReply())) ?? S3ErrorReply()
    }

    mutating func began(_ element: XMLName, within parent: XMLName?) throws(XMLRefusal) {}

    mutating func ended(_ element: XMLName, within parent: XMLName?, text: String) throws(XMLRefusal) {
        guard parent?.local == "Error" else { return }
        if element.local == "Code" { code = String(text.prefix(100)) }
        if element.local == "Message" { message = String(text.prefix(500)) }
    }
}

/// The `UploadId` of an `InitiateMultipartUploadResult`, or the `ETag` of a `CopyObjectResult` or
/// `CompleteMultipartUploadResult`.
struct S3ResultField: BoundedXMLHandler {
    let name: String
    var value: String?
    var rootName: String?

    /// The text of the first `name` element directly inside the root, and the root's name.
    static func parse(_ bytes: [UInt8], field: String) throws(XMLRefusal) -> S3ResultField {
        try BoundedXMLReader.read(bytes, into: S3ResultField(name: field))
    }

    mutating func began(_ element: XMLName, within parent: XMLName?) throws(XMLRefusal) {
        if parent == nil { rootName = element.local }
    }

    mutating func ended(_ element: XMLName, within parent: XMLName?, text: String) throws(XMLRefusal) {
        if value == nil, element.local == name, parent?.local == rootName { value = text }
    }
}
