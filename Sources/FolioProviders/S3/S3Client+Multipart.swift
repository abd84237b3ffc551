#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Crypto
import Folio
import Foundation
import NIOCore

extension S3Client {
    /// Uploads the file at `source` to `key` in parts of `partSize` bytes, `concurrency` at a time,
    /// then completes the upload with `headers` (conditions): the object appears whole or not at all,
    /// and a failed upload is aborted so no parts are left behind.
    func uploadInParts(
        _ key: String, from source: URL, partSize: Int, concurrency: Int, headers: [(String, String)], progress: Progress? = nil
    ) async throws -> Reply {
        let size = try await HTTPTransfer.size(of: source.path)
        // Starting an upload again after a dropped connection at worst leaves an unused upload id.
        let started = try await send("POST", key, query: [("uploads", "")], repeatable: true)
        guard started.status == 200 else { throw Self.statusError(started.status, started.body, "POST uploads", key) }
        guard let uploadID = try? S3ResultField.parse(started.body, field: "UploadId").value, !uploadID.isEmpty else {
            throw FileProviderError(.cannotSynchronize, message: "the server started a multipart upload of \(key) without an upload id")
        }
        do {
            let count = Int((size + Int64(partSize) - 1) / Int64(partSize))
            var tags = [String](repeating: "", count: count)
            try await withThrowingTaskGroup(of: (Int, String).self) { group in
                var next = 0
                func add() {
                    let number = next
                    next += 1
                    group.addTask { (number, try await self.uploadPart(key, uploadID: uploadID, number: number + 1, source: source, offset: Int64(number) * Int64(partSize), length: partSize)) }
                }
                for _ in 0..<min(concurrency, count) { add() }
                while let (number, tag) = try await group.next() {
                    tags[number] = tag
                    progress?.completedUnitCount += Int64(min(Int64(partSize), size - Int64(number) * Int64(partSize)))
                    if next < count { add() }
                }
            }
            let body = "<CompleteMultipartUpload>"
                + tags.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(XMLEntities.encode($0.element))</ETag></Part>" }.joined()
                + "</CompleteMultipartUpload>"
            let completed = try await send(
                "POST", key, query: [("uploadId", uploadID)], headers: headers + [("Content-Type", "application/xml")], body: Array(body.utf8),
                timeout: .minutes(10))
            // A 200 reply can still carry an error: S3 reports failures found while assembling in the body.
            // (AWS names the result …Result, moto …Response.)
            let result = try? S3ResultField.parse(completed.body, field: "ETag")
            guard completed.status == 200, result?.rootName?.hasPrefix("CompleteMultipartUpload") == true else {
                throw Self.statusError(completed.status == 200 ? 500 : completed.status, completed.body, "POST complete", key)
            }
            return completed
        } catch {
            _ = try? await send("DELETE", key, query: [("uploadId", uploadID)])
            throw error
        }
    }

    /// Uploads one part (read whole, hashed, then sent) and returns its ETag.
    private func uploadPart(_ key: String, uploadID: String, number: Int, source: URL, offset: Int64, length: Int) async throws -> String {
        try Task.checkCancellation()
        let bytes = try await ProviderFileWork.run { try FileChunks.read(source.path, offset: offset, length: length) }
        let reply = try await send(
            "PUT", key, query: [("partNumber", "\(number)"), ("uploadId", uploadID)], body: bytes, timeout: .minutes(10))
        guard reply.status == 200, let tag = reply.header("ETag") else { throw Self.statusError(reply.status, reply.body, "PUT part \(number)", key) }
        return tag
    }
}
