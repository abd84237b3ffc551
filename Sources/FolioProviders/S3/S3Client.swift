import AsyncHTTPClient
import Crypto
import Folio
import FolioSystem
import Foundation
import NIOCore
import NIOHTTP1

/// The HTTP side of the S3 provider: path-style requests to one bucket, signed with SigV4, status
/// codes and S3 error codes mapped to provider errors, bodies streamed from and to files.
struct S3Client: Sendable {
    /// The server (scheme, host, port; no path).
    let endpoint: URL
    let bucket: String
    let signer: SigV4Signer
    let client: HTTPClient
    /// How long a request without content may take.
    let requestTimeout: TimeAmount
    /// The longest listing page read.
    static let maximumListing = 16 << 20

    /// A response with the body read (for small replies).
    struct Reply {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// The `Host` header value (signed, so set explicitly).
    var host: String {
        var text = endpoint.host ?? ""
        if let port = endpoint.port { text += ":\(port)" }
        return text
    }

    /// The request path of `key` (percent-encoded once, as signed).
    func path(_ key: String) -> String {
        key.isEmpty ? "/\(bucket)" : "/\(bucket)/" + SigV4Signer.encode(key, keepingSlashes: true)
    }

    /// A signed request for `key` with `query`; `payloadHash` is the body's SHA-256 in hex.
    func request(
        _ method: String, _ key: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        payloadHash: String = SigV4Signer.emptyPayloadHash
    ) -> HTTPClientRequest {
        let path = path(key)
        let queryText = SigV4Signer.canonicalQuery(query)
        let origin = "\(endpoint.scheme ?? "http")://\(host)"
        var request = HTTPClientRequest(url: origin + path + (queryText.isEmpty ? "" : "?" + queryText))
        request.method = HTTPMethod(rawValue: method)
        let signed = signer.sign(method: method, path: path, query: query, headers: [("host", host)] + headers, payloadHash: payloadHash)
        for (name, value) in signed { request.headers.add(name: name, value: value) }
        return request
    }

    /// A presigned GET of `key`, valid for `expires` seconds from `date`.
    func presignedURL(_ key: String, expires: Int, date: Date = Date()) -> URL? {
        let path = path(key)
        // The host as whoever opens the link sends it: without the scheme's default port.
        let scheme = endpoint.scheme ?? "http"
        var host = endpoint.host ?? ""
        if let port = endpoint.port, port != (scheme == "https" ? 443 : 80) { host += ":\(port)" }
        let query = signer.presignedQuery(method: "GET", path: path, host: host, expires: expires, date: date)
        return URL(string: "\(scheme)://\(host)\(path)?\(SigV4Signer.canonicalQuery(query))")
    }

    /// Sends a request with an optional small body and reads the whole reply (up to `limit` bytes).
    func send(
        _ method: String, _ key: String, query: [(String, String)] = [], headers: [(String, String)] = [], body: [UInt8]? = nil,
        limit: Int = 1 << 20, timeout: TimeAmount? = nil, repeatable: Bool? = nil
    ) async throws -> Reply {
        var request = request(method, key, query: query, headers: headers, payloadHash: body.map { SHA256.hash(data: $0).hexadecimal } ?? SigV4Signer.emptyPayloadHash)
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        do {
            let reply = try await HTTPTransfer.execute(request, client: client, timeout: timeout ?? requestTimeout, limit: limit, repeatable: repeatable)
            return Reply(status: reply.status, headers: reply.headers, body: reply.body)
        } catch {
            throw Self.transportError(error, method, key)
        }
    }

    /// PUTs `source` (its request body and, when in memory, its bytes, as ``FileChunks/body(of:)``
    /// made them), or nothing, to `key`; the payload is hashed first, so the server refuses a body
    /// that arrives damaged.
    func upload(_ key: String, from contents: (source: UploadContents, body: HTTPClientRequest.Body, bytes: [UInt8]?)?, headers: [(String, String)]) async throws -> Reply {
        guard let (source, body, bytes) = contents else { return try await send("PUT", key, headers: headers, body: [], timeout: .hours(1)) }
        var hash = SHA256()
        if let bytes {
            hash.update(data: bytes)
        } else if case .file(let file) = source {
            for try await chunk in FileChunks(path: file.path) { chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) } }
        }
        var request = request("PUT", key, headers: headers, payloadHash: hash.finalize().hexadecimal)
        request.body = body
        do {
            let reply = try await HTTPTransfer.execute(request, client: client, timeout: .hours(1), limit: 1 << 20)
            return Reply(status: reply.status, headers: reply.headers, body: reply.body)
        } catch {
            throw Self.transportError(error, "PUT", key)
        }
    }

    /// GETs `key` into the new file `destination`, reporting progress; returns the reply's ETag, the size, the SHA-256 and the
    /// file's status (flushed to disk first when `durable`).
    /// A short, long or (for plain-MD5 ETags) damaged body, or a dropped connection, leaves no file.
    func download(_ key: String, to destination: String, progress: Progress, durable: Bool, arriving: ArrivingContents? = nil) async throws -> (
        etag: String?, size: Int64, sha256: Data, written: FileStatus
    ) {
        let received = try await HTTPTransfer.download(
            request("GET", key), client: client, to: destination, progress: progress, verifiesMD5ETag: true, durable: durable, arriving: arriving
        ) {
            status, body in Self.statusError(status, body, "GET", key)
        }
        // S3 names every object's version: a reply without one is not a GET's reply.
        guard let etag = received.headers.first(name: "ETag") else {
            unlink(destination)
            throw FileProviderError(.cannotSynchronize, message: "GET \(key): the reply has no ETag")
        }
        return (etag, received.size, received.sha256, received.written)
    }

    /// One page of the keys under `prefix` (by `delimiter` when given), after `token`.
    func list(prefix: String, delimiter: String? = nil, token: String? = nil, maximumKeys: Int = 1000) async throws -> S3ListPage {
        var query = [("list-type", "2"), ("prefix", prefix), ("max-keys", "\(maximumKeys)")]
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let token { query.append(("continuation-token", token)) }
        let reply = try await send("GET", "", query: query, limit: Self.maximumListing)
        guard reply.status == 200 else { throw Self.statusError(reply.status, reply.body, "LIST", prefix) }
        do {
            return try ListBucketParser.parse(reply.body)
        } catch {
            throw FileProviderError(.cannotSynchronize, message: "the server's listing of \(bucket)/\(prefix) cannot be read: \(error)")
        }
    }

    /// Every key under `prefix` (by `delimiter` when given), all pages.
    func listAll(prefix: String, delimiter: String? = nil) async throws -> S3ListPage {
        var all = S3ListPage()
        var token: String?
        repeat {
            let page = try await list(prefix: prefix, delimiter: delimiter, token: token)
            all.objects += page.objects
            all.prefixes += page.prefixes
            guard page.isTruncated else { break }
            guard page.continuationToken != token else {
                throw FileProviderError(.cannotSynchronize, message: "the server's listing of \(bucket)/\(prefix) repeats its continuation token")
            }
            token = page.continuationToken
        } while true
        return all
    }

    // MARK: Errors

    /// The provider error for an HTTP status that is not success, given the reply's body: S3's
    /// error codes first, then what the status means for any HTTP server (`HTTPStatusError`).
    static func statusError(_ status: Int, _ body: [UInt8], _ method: String, _ key: String) -> any Error {
        let reply = S3ErrorReply.parse(body)
        let target = key.isEmpty ? "/" : key
        let what = "\(method) \(target): HTTP \(status)" + (reply.code.map { " \($0)" } ?? "") + (reply.message.map { " (\($0))" } ?? "")
        switch (status, reply.code) {
        case (_, "NoSuchBucket"): return FileProviderError(.cannotSynchronize, message: "no such bucket: \(what)")
        case (_, "RequestTimeTooSkewed"):
            return FileProviderError(.notAuthenticated, message: "this computer's clock is too far from the server's (set the time, then sync again): \(what)")
        case (403, "SignatureDoesNotMatch"): return FileProviderError(.notAuthenticated, message: "the server refused the secret key: \(what)")
        case (403, "InvalidAccessKeyId"): return FileProviderError(.notAuthenticated, message: "the server does not know the access key: \(what)")
        case (403, "AccessDenied"): return FileProviderError(.notAuthenticated, message: "the server does not let this account in: \(what)")
        case (409, "ConditionalRequestConflict"): return FileProviderError(.localVersionConflictingWithServer, message: what)
        case (_, "EntityTooLarge"): return FileProviderError(.cannotSynchronize, message: "the server refuses a file this large: \(what)")
        case (_, "QuotaExceeded"): return FileProviderError(.insufficientQuota, message: "the account is out of space: \(what)")
        case (403, _): return FileProviderError(.notAuthenticated, message: "the server does not let this account in: \(what)")
        case (400, "KeyTooLongError"): return FileProviderError(.excludedFromSync, message: "the server refuses the name (too long): \(what)")
        case (400, "RequestTimeout"), (409, "OperationAborted"):
            return FileProviderError(.providerDomainTemporarilyUnavailable, message: "the server is busy: \(what)")
        case (400, _): return FileProviderError(.cannotSynchronize, message: "the server refused the request: \(what)")
        case (409, _): return FileProviderError(.cannotSynchronize, message: "the server refused it: \(what)")
        default:
            let words = reply.code.map { code in reply.message.map { "\(code): \($0)" } ?? code } ?? HTTPStatusError.words(body)
            return HTTPStatusError.error(status, method: method, target: target, isRoot: key.isEmpty, words: words)
        }
    }

    /// The provider error for a failure below HTTP (refused connection, timeout, reset).
    static func transportError(_ error: any Error, _ method: String, _ key: String) -> any Error {
        if error is FileProviderError || error is CancellationError { return error }
        return FileProviderError(.serverUnreachable, message: "\(method) \(key): \(error)")
    }
}
