#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Crypto
import FolioSystem
import Foundation
import SystemPackage

/// Streams file content with raw reads and writes: 1 MiB at a time, hashing as it goes, reporting
/// progress and stopping when the progress is cancelled.
enum LocalFileCopy {
    static let chunk = 1 << 20

    /// Calls `body` with each chunk of the file at `path`.
    static func read(_ path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let source = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        defer { try? source.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try source.read(into: buffer, retryOnInterrupt: true)
            if count == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Copies `source` to a new file `destination` (mode 0600 unless `mode` is given), flushed to
    /// disk, and returns the SHA-256 of what was copied. A cancelled `progress` removes the partial
    /// copy and throws `CocoaError.userCancelled`.
    @discardableResult
    static func copy(from source: String, to destination: String, mode: FilePermissions = [.ownerReadWrite], progress: Progress? = nil)
        throws -> Data
    {
        let output = try FileDescriptor.open(
            FilePath(destination), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: mode)
        var hasher = SHA256()
        var done: Int64 = 0
        do {
            defer { try? output.close() }
            try read(source) { bytes in
                if progress?.isCancelled == true {
                    throw CocoaError(.userCancelled, userInfo: [NSLocalizedDescriptionKey: "the transfer was cancelled"])
                }
                hasher.update(bufferPointer: bytes)
                _ = try output.writeAll(bytes)
                done += Int64(bytes.count)
                progress?.completedUnitCount = done
            }
            guard fsync(output.rawValue) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            unlink(destination)
            throw error
        }
        return Data(hasher.finalize())
    }
}
