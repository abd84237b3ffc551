#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AsyncHTTPClient
import Crypto
import Folio
import FolioSystem
import Foundation
import NIOCore
import NIOHTTP1

/// The HTTP side of the WebDAV provider: requests with the provider's credentials, status codes
/// mapped to provider errors, bodies streamed from and to files.
struct WebDAVClient: Sendable {
    /// The base URL (ending in `/`).
    let base: URL
    /// The `Authorization` header value, when the server needs one (never logged).
    let authorization: String?
    let client: HTTPClient
    /// The lean client for small transfers, when the server is plain `http` (``PlainHTTPClient``).
    let plain: PlainHTTPClient?
    /// The base URL's path as sent, percent-encoded, ending in `/`.
    let encodedBasePath: String
    /// How long a request without content may take.
    let requestTimeout: TimeAmount
    /// The longest PROPFIND reply read.
    static let maximumListing = 64 << 20

    /// A response with the body read (for small replies).
    struct Reply {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        /// The bytes an upload sent.
        var sent: Int64 = 0
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// The URL of `relative` (already decoded; encoded here).
    func url(_ relative: String) -> String {
        base.absoluteString + DAVPath.encode(relative)
    }

    /// The base URL's scheme, host and port (full-URL hrefs must name it).
    let origin: String
    /// The path part of the base URL, ending in `/` (for matching hrefs). Kept, not read from `base`
    /// each time: a listing matches every href it names against it.
    let basePath: String

    init(base: URL, authorization: String?, client: HTTPClient, requestTimeout: TimeAmount) {
        self.base = base
        self.authorization = authorization
        self.client = client
        self.requestTimeout = requestTimeout
        var origin = "\(base.scheme ?? "http")://\(base.host ?? "")"
        if let port = base.port { origin += ":\(port)" }
        self.origin = origin
        basePath = base.path.hasSuffix("/") ? base.path : base.path + "/"
        let components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        var encoded = components?.percentEncodedPath ?? ""
        if !encoded.hasSuffix("/") { encoded += "/" }
        encodedBasePath = encoded
        // A base with a query or a fragment is left to AsyncHTTPClient, which sends it as given.
        plain = components?.percentEncodedQuery == nil && components?.fragment == nil && encoded.hasPrefix("/") ? PlainHTTPClient.shared(for: base) : nil
    }

    /// The request for the plain client, or nil when a field's value holds a line break or a NUL
    /// (an ETag a server listed with one): that request is left to AsyncHTTPClient, which refuses it.
    private func plainRequest(_ method: String, _ relative: String, headers: [(String, String)], body: [UInt8]?) -> PlainHTTPClient.Request? {
        guard headers.allSatisfy({ !$0.1.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } }) else { return nil }
        var fields = headers
        if let authorization { fields.insert(("Authorization", authorization), at: 0) }
        return PlainHTTPClient.Request(method: method, target: encodedBasePath + DAVPath.encode(relative), fields: fields, body: body)
    }

    private func request(_ method: String, _ relative: String, headers: [(String, String)]) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url(relative))
        request.method = HTTPMethod(rawValue: method)
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        return request
    }

    /// Sends a request with an optional small body and reads the whole reply (up to `limit` bytes).
    ///
    /// A collection named without its trailing slash may be redirected (301, 302, 307, 308) to its
    /// slashed address, as lighttpd does for every method: for PROPFIND, MKCOL and OPTIONS that
    /// redirect, and no other, is followed once, on the same server. Callers that know they name a
    /// collection (MOVE, DELETE of a folder) pass the slash themselves.
    func send(
        _ method: String, _ relative: String, headers: [(String, String)] = [], body: [UInt8]? = nil, limit: Int = 1 << 20
    ) async throws -> Reply {
        let reply = try await sendOnce(method, relative, headers: headers, body: body, limit: limit)
        // Only for requests that change nothing or create a collection: a DELETE or MOVE meant for
        // a file that became a folder must not reach the folder.
        if ["PROPFIND", "MKCOL", "OPTIONS"].contains(method), [301, 302, 307, 308].contains(reply.status), !relative.isEmpty, !relative.hasSuffix("/"), let location = reply.header("Location"),
            isSlashed(location, of: relative)
        {
            return try await sendOnce(method, relative + "/", headers: headers, body: body, limit: limit)
        }
        return reply
    }

    /// Whether `location` (a redirect's target) is `relative`'s own address with a trailing slash, on this server.
    func isSlashed(_ location: String, of relative: String) -> Bool {
        let path = location.split(separator: "?", maxSplits: 1).first.map(String.init) ?? location
        guard path.hasSuffix("/") else { return false }
        let absolute = path.hasPrefix("/") || path.contains("://")
        guard absolute, let target = DAVPath.relative(path, basePath: basePath, origin: origin) else { return false }
        return target.utf8.elementsEqual(relative.utf8)
    }

    private func sendOnce(_ method: String, _ relative: String, headers: [(String, String)], body: [UInt8]?, limit: Int) async throws -> Reply {
        var request = request(method, relative, headers: headers)
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let reply = try await HTTPTransfer.execute(request, client: client, timeout: requestTimeout, limit: limit)
            return Reply(status: reply.status, headers: reply.headers, body: reply.body)
        } catch {
            throw Self.transportError(error, method, relative)
        }
    }

    /// PUTs `source` (or nothing) to `relative`.
    func upload(_ relative: String, from source: UploadContents?, headers: [(String, String)]) async throws -> Reply {
        if let plain {
            // Bytes in memory (or none) go as one plain request.
            var bytes: [UInt8]? = []
            if case .bytes(let contents) = source { bytes = contents } else if source != nil { bytes = nil }
            if let bytes, let plainRequest = plainRequest("PUT", relative, headers: headers, body: bytes) {
                do {
                    let reply = try await HTTPTransfer.execute(
                        plainRequest, plain: plain, timeout: .seconds(3600), limit: 1 << 20, what: "PUT \(url(relative))")
                    return Reply(status: reply.status, headers: reply.headers, body: reply.body, sent: Int64(bytes.count))
                } catch {
                    throw Self.transportError(error, "PUT", relative)
                }
            }
        }
        var request = request("PUT", relative, headers: headers)
        var size: Int64 = 0
        if let source {
            (request.body, size, _) = try await FileChunks.body(of: source)
        } else {
            request.body = .bytes(ByteBuffer())
        }
        do {
            let reply = try await HTTPTransfer.execute(request, client: client, timeout: .hours(1), limit: 1 << 20)
            return Reply(status: reply.status, headers: reply.headers, body: reply.body, sent: size)
        } catch {
            throw Self.transportError(error, "PUT", relative)
        }
    }

    /// GETs `relative` into the new file `destination`, reporting progress; returns the reply's ETag, the size, the SHA-256 and the
    /// file's status (flushed to disk first when `durable`).
    /// A body shorter or longer than its Content-Length, or a dropped connection, leaves no file.
    /// `landing` runs where the file is finished (``FetchLanding``).
    func download(
        _ relative: String, to destination: String, progress: Progress, durable: Bool, arriving: ArrivingContents? = nil, landing: FetchLanding? = nil
    ) async throws -> (etag: String?, size: Int64, sha256: Data, written: FileStatus) {
        if let plain, arriving == nil, let plainRequest = plainRequest("GET", relative, headers: [], body: nil) {
            let received = try await HTTPTransfer.download(
                plainRequest, plain: plain, what: "GET \(url(relative))", to: destination, progress: progress,
                durable: durable, landing: landing
            ) { [self] status, body in statusError(status, "GET", relative, body: body) }
            return (received.headers.first(name: "ETag"), received.size, received.sha256, received.written)
        }
        let received = try await HTTPTransfer.download(
            request("GET", relative, headers: []), client: client, to: destination, progress: progress, durable: durable, arriving: arriving,
            landing: landing
        ) {
            status, body in statusError(status, "GET", relative, body: body)
        }
        return (received.headers.first(name: "ETag"), received.size, received.sha256, received.written)
    }

    /// The resources of a PROPFIND at `depth` (0 or 1).
    func propfind(_ relative: String, depth: Int) async throws -> [DAVResource] {
        try read(try await propfindReply(relative, depth: depth), relative)
    }

    /// A folder's Depth 1 listing: unchanged, or read with its reply's digest.
    enum FolderReply: Sendable {
        /// The reply said what the one whose digest the caller gave said.
        case unchanged
        /// The reply's resources, and its digest for the next time.
        case read([DAVResource], digest: SHA256Digest)
    }

    /// The folder `relative`'s Depth 1 listing, unless its reply says what the one whose digest is
    /// `previous` said (``ListingDigest``). A server lists a folder where nothing changed the same
    /// way each time, and taking a reply's digest costs a small part of reading it again.
    func list(_ relative: String, unless previous: SHA256Digest?) async throws -> FolderReply {
        let body = try await propfindReply(relative, depth: 1)
        let digest = ListingDigest.of(body)
        if let previous, previous == digest { return .unchanged }
        return .read(try read(body, relative), digest: digest)
    }

    /// The body of a PROPFIND's multistatus reply.
    private func propfindReply(_ relative: String, depth: Int) async throws -> [UInt8] {
        let body = Array(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <D:propfind xmlns:D="DAV:" xmlns:A="http://apache.org/dav/props/"><D:prop><D:resourcetype/><D:getetag/><D:getcontentlength/><D:getlastmodified/><D:getcontenttype/><A:executable/></D:prop></D:propfind>
            """.utf8)
        let reply = try await send(
            "PROPFIND", relative, headers: [("Depth", "\(depth)"), ("Content-Type", "application/xml; charset=utf-8")], body: body,
            limit: Self.maximumListing)
        guard reply.status == 207 else { throw statusError(reply.status, "PROPFIND", relative, body: reply.body) }
        return reply.body
    }

    /// The resources a multistatus reply to a PROPFIND of `relative` names.
    private func read(_ body: [UInt8], _ relative: String) throws -> [DAVResource] {
        do {
            return try MultistatusParser.parse(body)
        } catch {
            throw FileProviderError(.cannotSynchronize, message: "the server's listing of /\(relative) cannot be read: \(error)")
        }
    }

    // MARK: Errors

    /// The provider error for an HTTP status that is not success (`HTTPStatusError`), with the
    /// server's words from `body`.
    func statusError(_ status: Int, _ method: String, _ relative: String, body: [UInt8] = []) -> any Error {
        HTTPStatusError.error(status, method: method, target: basePath + relative, isRoot: relative.isEmpty || relative == "/", words: HTTPStatusError.words(body))
    }

    /// The provider error for a failure below HTTP (refused connection, timeout, reset).
    static func transportError(_ error: any Error, _ method: String, _ relative: String) -> any Error {
        if error is FileProviderError || error is CancellationError { return error }
        return FileProviderError(.serverUnreachable, message: "\(method) /\(relative): \(error)")
    }
}
