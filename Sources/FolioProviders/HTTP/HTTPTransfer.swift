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
import SystemPackage

/// Transfers between files and HTTP bodies, shared by the WebDAV and S3 clients: bodies streamed
/// from a file and into a new file, never whole in memory.
enum HTTPTransfer {
    /// Runs `request` and writes a 200 reply's body into the new file `destination`, reporting
    /// progress; returns the reply's headers, the bytes written, their SHA-256 (computed as they
    /// arrive, so nobody reads the file again to hash it) and the file's status once written. The
    /// file is flushed to disk only when `durable` (the sync engine's downloads are: it records
    /// what it places as synced).
    ///
    /// The file is its owner's alone while it arrives, and gets the umask's mode once complete.
    /// A body shorter or longer than its Content-Length, one whose MD5 differs from a plain-MD5 ETag
    /// (when `verifiesMD5ETag`), a dropped connection or a cancellation leaves no file.
    /// With `arriving`, each piece is written as it comes and reported there (a reader takes the
    /// file before it is whole). With `landing`, its work runs in the job that finishes the file
    /// (``FetchLanding``; not with `arriving`, whose reader needs the file where it is).
    /// - Parameter failure: the error for a status that is not 200, given the start of its body.
    static func download(
        _ request: HTTPClientRequest, client: HTTPClient, to destination: String, progress: Progress, verifiesMD5ETag: Bool = false, durable: Bool = false,
        arriving: ArrivingContents? = nil, landing: FetchLanding? = nil, failure: (Int, [UInt8]) -> any Error
    ) async throws -> (headers: HTTPHeaders, size: Int64, sha256: Data, written: FileStatus) {
        let landing = arriving == nil ? landing : nil
        // The file's own work (its creation, which can take long on a file system with many
        // recent deletions, its writes, its mode) runs on the file-work pool, never on the
        // cooperative pool that runs this task: the body is written in pieces of 1 MiB, each while
        // the next arrives, and a small body is written whole, created and finished at once.
        let file = DownloadFile(path: destination)
        var done: Int64 = 0
        // The write under way, while the next piece arrives (one at a time, in order).
        var writing: Task<Void, any Error>?
        do {
            // A pooled connection found closed before any reply is tried again, like any read.
            var attempt = 1
            var reply: HTTPClientResponse?
            while reply == nil {
                do {
                    reply = try await client.execute(request, timeout: .hours(1))
                } catch where attempt < 3 && isDroppedConnection(error) {
                    attempt += 1
                }
            }
            let response = reply!
            let status = Int(response.status.code)
            guard status == 200 else {
                var body = try await response.body.collect(upTo: 64 << 10)
                throw failure(status, body.readBytes(length: body.readableBytes) ?? [])
            }
            let expected = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
            if let expected { progress.totalUnitCount = expected }
            // Only a strong tag promises these very bytes.
            let header = response.headers.first(name: "ETag")
            let etag = verifiesMD5ETag && header?.hasPrefix("W/") == false ? ETag.opaque(header)?.lowercased() : nil
            var md5 = etag.map(isMD5) == true ? Insecure.MD5() : nil
            var sha256 = SHA256()
            // The pieces received since the last write (kept as they came: no copy).
            var pending: [ByteBuffer] = []
            var pendingBytes = 0
            for try await buffer in response.body {
                if progress.isCancelled || Task.isCancelled {
                    throw CocoaError(.userCancelled, userInfo: [NSLocalizedDescriptionKey: "the download was cancelled"])
                }
                buffer.withUnsafeReadableBytes { raw in
                    md5?.update(bufferPointer: raw)
                    sha256.update(bufferPointer: raw)
                }
                pending.append(buffer)
                pendingBytes += buffer.readableBytes
                done += Int64(buffer.readableBytes)
                progress.completedUnitCount = done
                if pendingBytes >= (arriving == nil ? 1 << 20 : 0) {
                    let pieces = pending, total = done
                    pending = []
                    pendingBytes = 0
                    try await writing?.value
                    writing = Task {
                        try await ProviderFileWork.run { try file.write(pieces) }
                        arriving?.wrote(total, to: destination)
                    }
                }
            }
            let what = "\(request.method.rawValue) \(request.url)"
            if let expected, expected != done {
                throw FileProviderError(.serverUnreachable, message: "\(what) ended after \(done) of \(expected) bytes")
            }
            if let digest = md5?.finalize(), digest.hexadecimal != etag {
                throw FileProviderError(.serverUnreachable, message: "\(what): the bytes received do not match the server's MD5")
            }
            // Private while it arrives; then the mode any new file of the user's gets (the umask's).
            try await writing?.value
            writing = nil
            let rest = pending
            let digest = Data(sha256.finalize())
            let written = try await ProviderFileWork.run {
                try file.write(rest)
                let written = try file.finish(durable: durable)
                landing?.land(destination, written: written, sha256: digest)
                return written
            }
            arriving?.wrote(done, to: destination)
            return (response.headers, done, digest, written)
        } catch {
            _ = try? await writing?.value
            // Not cancellable: a cancelled download's file goes too (the pool skips work asked
            // for by a cancelled task).
            await Task.detached { _ = try? await ProviderFileWork.run { file.discard() } }.value
            if error is FileProviderError || error is CocoaError || error is CancellationError { throw error }
            throw FileProviderError(.serverUnreachable, message: "\(request.method.rawValue) \(request.url): \(error)")
        }
    }

    /// Runs `request` and reads its whole reply (up to `limit` bytes). An idempotent request (GET,
    /// HEAD, PROPFIND, OPTIONS, PUT, DELETE, and MKCOL, whose repeat is refused harmlessly) is sent
    /// again, up to three times in all, when the connection it went out on was found closed or reset
    /// (a pooled connection the server had dropped). A repeated write that had landed the first time
    /// fails its condition (If-None-Match, If-Match) and is reported as a conflict, which the sync
    /// engine settles by comparing contents; POST, MOVE and COPY are never repeated here.
    static func execute(_ request: HTTPClientRequest, client: HTTPClient, timeout: TimeAmount, limit: Int, repeatable: Bool? = nil) async throws -> (
        status: Int, headers: HTTPHeaders, body: [UInt8]
    ) {
        let repeatable = repeatable ?? repeatableMethods.contains(request.method.rawValue)
        var attempt = 0
        while true {
            attempt += 1
            do {
                let response = try await client.execute(request, timeout: timeout)
                var collected = try await response.body.collect(upTo: limit)
                return (Int(response.status.code), response.headers, collected.readBytes(length: collected.readableBytes) ?? [])
            } catch where attempt < 3 && repeatable && isDroppedConnection(error) {
                continue
            } catch is NIOTooManyBytesError {
                // The server was reached and answered: with more than any reply of its kind holds.
                throw FileProviderError(
                    .cannotSynchronize, message: "\(request.method.rawValue) \(request.url): the server's reply is larger than \(limit) bytes, more than Folio reads")
            }
        }
    }

    /// The methods ``execute(_:client:timeout:limit:repeatable:)`` sends again on a dropped connection.
    static let repeatableMethods: Set<String> = ["GET", "HEAD", "PROPFIND", "OPTIONS", "PUT", "DELETE", "MKCOL"]

    /// Whether `error` says the server closed or reset the connection.
    static func isDroppedConnection(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        if let error = error as? IOError { return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE }
        return false
    }

    /// Whether `text` is 32 lowercase hexadecimal digits.
    static func isMD5(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The size of the file at `path`, read on the providers' file-work pool.
    static func size(of path: String) async throws -> Int64 {
        try await ProviderFileWork.run {
            var status = stat()
            guard stat(path, &status) == 0 else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
            return Int64(status.st_size)
        }
    }
}

extension HTTPTransfer {
    /// The HTTP client every WebDAV and S3 provider of the process shares: connections are pooled
    /// per server, up to 16 at once (the sync engine's transfers; AsyncHTTPClient's default is 8),
    /// kept idle for at most 3 s; a connection that stays silent for a minute
    /// mid-transfer fails (so a stalled server cannot hang a download), and connecting gives up
    /// after ten seconds.
    static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(10), read: .seconds(60))
        configuration.redirectConfiguration = .disallow
        // Idle connections are dropped after 3 s, before servers drop them (Apache's keep-alive
        // timeout is 5 s): a request sent on a connection the server is closing fails.
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(3), concurrentHTTP1ConnectionsPerHostSoftLimit: 16)
        // No tracing: Folio bootstraps no tracer, and the default no-op one still built a span and
        // its attributes for every request (2% of a small-file download's processor time).
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}
