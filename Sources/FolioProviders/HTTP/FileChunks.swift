#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AsyncHTTPClient
import Folio
import Foundation
import NIOCore

/// A file's bytes as an async sequence of buffers, read 256 KiB at a time on the providers'
/// file-work pool (never on Swift's cooperative pool): an upload body that is never all in memory.
/// Each iteration opens the file once, so a file replaced meanwhile is read whole as it was (and
/// a length that no longer matches fails the request).
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let path: String

    /// Files up to this size are sent from one read (``body(of:)``): streaming a small body costs
    /// more than the bytes.
    static let wholeBodySize: Int64 = 1 << 20

    /// An open file, closed when the last iterator using it goes.
    final class Descriptor: Sendable {
        let raw: Int32
        init(_ path: String) throws {
            raw = open(path, O_RDONLY | O_CLOEXEC)
            guard raw >= 0 else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
        }
        deinit { close(raw) }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        var descriptor: Descriptor?
        var offset: Int64 = 0
        var finished = false

        mutating func next() async throws -> ByteBuffer? {
            guard !finished else { return nil }
            let (path, offset, open) = (self.path, self.offset, descriptor)
            let (bytes, opened) = try await ProviderFileWork.run {
                let descriptor = try open ?? Descriptor(path)
                return (try FileChunks.read(descriptor.raw, path: path, offset: offset, length: 256 << 10), descriptor)
            }
            descriptor = opened
            guard !bytes.isEmpty else {
                finished = true
                descriptor = nil
                return nil
            }
            self.offset += Int64(bytes.count)
            return ByteBuffer(bytes: bytes)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(path: path) }

    /// A request body sending `contents`, its size, and its bytes when they are in memory: a file is
    /// read whole on the file-work pool when small, streamed otherwise.
    static func body(of contents: UploadContents) async throws -> (body: HTTPClientRequest.Body, size: Int64, bytes: [UInt8]?) {
        let path: String
        switch contents {
        case .bytes(let bytes): return (.bytes(ByteBuffer(bytes: bytes)), Int64(bytes.count), bytes)
        case .file(let url): path = url.path
        }
        let (size, bytes) = try await ProviderFileWork.run { () -> (Int64, [UInt8]?) in
            let descriptor = try Descriptor(path)
            var status = stat()
            guard fstat(descriptor.raw, &status) == 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path]) }
            guard Int64(status.st_size) <= wholeBodySize else { return (Int64(status.st_size), nil) }
            let bytes = try read(descriptor.raw, path: path, offset: 0, length: Int(status.st_size))
            return (Int64(bytes.count), bytes)
        }
        if let bytes { return (.bytes(ByteBuffer(bytes: bytes)), size, bytes) }
        return (.stream(FileChunks(path: path), length: .known(size)), size, nil)
    }

    /// Up to `length` bytes of the file at `path` from `offset` (blocking: run it on a pool made for it).
    static func read(_ path: String, offset: Int64, length: Int) throws -> [UInt8] {
        let descriptor = try Descriptor(path)
        return try read(descriptor.raw, path: path, offset: offset, length: length)
    }

    /// Up to `length` bytes of the open file `descriptor` (`path`, for errors) from `offset`.
    static func read(_ descriptor: Int32, path: String, offset: Int64, length: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, length - done, off_t(offset) + off_t(done)) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path]) }
            if count == 0 { break }
            done += count
        }
        bytes.removeSubrange(done...)
        return bytes
    }
}
