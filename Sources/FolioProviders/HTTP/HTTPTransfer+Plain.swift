import Crypto
import Folio
import FolioSystem
import Foundation
import NIOHTTP1
import NIOPosix
import Synchronization

/// The same transfers as ``HTTPTransfer``'s, through ``PlainHTTPClient``: each runs whole as one job
/// on its pool, the reply read, hashed and written to its file on that one thread.
extension HTTPTransfer {
    /// A cancellation seen by a job on the plain pool, which runs outside any task.
    final class Cancellation: Sendable {
        private let flag = Atomic<Bool>(false)
        func cancel() { flag.store(true, ordering: .relaxed) }
        var isCancelled: Bool { flag.load(ordering: .relaxed) }
    }

    /// Runs `body` on the plain pool; a cancellation of the calling task reaches it through its
    /// argument (checked at least every quarter second while it waits for the server).
    static func onPlainPool<T: Sendable>(_ body: @escaping @Sendable (Cancellation) throws -> T) async throws -> T {
        let cancellation = Cancellation()
        return try await withTaskCancellationHandler {
            try await PlainHTTPClient.pool.runIfActive { try body(cancellation) }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// ``execute(_:client:timeout:limit:repeatable:)`` through the plain client: the whole reply,
    /// up to `limit` bytes, with the same repeats of a repeatable request whose connection was
    /// found closed. `what` names the request in errors.
    static func execute(
        _ request: PlainHTTPClient.Request, plain client: PlainHTTPClient, timeout: Duration?, limit: Int, what: String
    ) async throws -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        let repeatable = repeatableMethods.contains(request.method)
        return try await onPlainPool { cancellation in
            let start = PlainHTTPWait.now()
            let wait = PlainHTTPWait(
                silence: 60_000_000_000, deadline: timeout.map { start + PlainHTTPWait.nanoseconds($0) }, isCancelled: { cancellation.isCancelled })
            do {
                let (head, body) = try client.collect(request, repeatable: repeatable, wait: wait, limit: limit)
                return (head.status, HTTPHeaders(head.fields.map { ($0.name, $0.value) }), body)
            } catch PlainHTTPError.tooLarge {
                throw FileProviderError(.cannotSynchronize, message: "\(what): the server's reply is larger than \(limit) bytes, more than Folio reads")
            } catch PlainHTTPError.cancelled {
                throw CancellationError()
            } catch {
                throw FileProviderError(.serverUnreachable, message: "\(what): \(error)")
            }
        }
    }

    /// The smallest body received straight into its file's pages (``DownloadFile/receive(length:fill:)``):
    /// below it, mapping the file costs more than the copy it saves.
    static let receivedInPlace: Int64 = 8 << 20

    /// ``download(_:client:to:progress:verifiesMD5ETag:durable:arriving:landing:failure:)`` through
    /// the plain client (no MD5 check, no reader while it arrives): a 200 reply's body written into
    /// the new file `destination` as it comes, hashed, finished (flushed when `durable`) and landed,
    /// all in one job. A short or long body, a dropped connection or a cancellation leaves no file.
    static func download(
        _ request: PlainHTTPClient.Request, plain client: PlainHTTPClient, what: String, to destination: String, progress: Progress, durable: Bool,
        landing: FetchLanding?, failure: @escaping @Sendable (Int, [UInt8]) -> any Error
    ) async throws -> (headers: HTTPHeaders, size: Int64, sha256: Data, written: FileStatus) {
        try await onPlainPool { cancellation in
            let file = DownloadFile(path: destination)
            let wait = PlainHTTPWait(silence: 60_000_000_000, deadline: nil, isCancelled: { cancellation.isCancelled || progress.isCancelled })
            var sha256 = SHA256()
            var done: Int64 = 0
            var refusal: [UInt8] = []
            do {
                let head = try client.exchange(request, repeatable: true, wait: wait) { head, body in
                    guard head.status == 200 else {
                        try body.read { piece in refusal.append(contentsOf: piece.prefix(max(0, (64 << 10) - refusal.count))) }
                        return
                    }
                    if let length = body.length { progress.totalUnitCount = length }
                    func landed(_ piece: UnsafeRawBufferPointer) {
                        sha256.update(bufferPointer: piece)
                        done += Int64(piece.count)
                        progress.completedUnitCount = done
                    }
                    // A large body framed by its length lands in the file's pages as it is received.
                    if let length = body.length, length >= Self.receivedInPlace,
                        try file.receive(length: length, fill: { window in try body.read(into: window, landed: landed) })
                    {
                        return
                    }
                    try body.read { piece in
                        try file.write(piece)
                        landed(piece)
                    }
                }
                guard head.status == 200 else { throw failure(head.status, refusal) }
                // An empty body, or one whose Content-Length said nothing: its size is what came.
                if done == 0 { progress.totalUnitCount = 0 }
                let digest = Data(sha256.finalize())
                let written = try file.finish(durable: durable)
                landing?.land(destination, written: written, sha256: digest)
                return (HTTPHeaders(head.fields.map { ($0.name, $0.value) }), done, digest, written)
            } catch {
                file.discard()
                if error is FileProviderError || error is CocoaError { throw error }
                if case PlainHTTPError.cancelled = error {
                    throw CocoaError(.userCancelled, userInfo: [NSLocalizedDescriptionKey: "the download was cancelled"])
                }
                throw FileProviderError(.serverUnreachable, message: "\(what): \(error)")
            }
        }
    }
}
