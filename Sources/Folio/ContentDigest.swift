import Crypto
package import Foundation
package import SystemPackage

/// The SHA-256 of a file's content, read with raw 1 MiB reads: what the version store names objects
/// by, and what providers and the sync engine compare contents with.
package enum ContentDigest {
    /// The SHA-256 of `data`, in lowercase hexadecimal (the version store's object name).
    package static func sha256(of data: Data) -> String {
        SHA256.hash(data: data).hexadecimal
    }

    /// The SHA-256 of the file at `path`.
    package static func sha256(ofFileAt path: String) throws -> Data {
        var hasher = SHA256()
        let source = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        defer { try? source.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try source.read(into: buffer, retryOnInterrupt: true)
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        return Data(hasher.finalize())
    }

    /// The bytes of the file at `path` and their SHA-256, when it holds at most `limit` bytes (nil
    /// when it holds more); `size` is how many it is expected to hold.
    package static func read(_ path: String, expecting size: Int, upTo limit: Int) throws -> (bytes: [UInt8], digest: Data)? {
        let source = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        defer { try? source.close() }
        // One byte more than expected: a read that fills it has not met the end.
        var bytes = [UInt8](repeating: 0, count: min(max(size, 0), limit) + 1)
        var done = 0
        while true {
            let count = try bytes.withUnsafeMutableBytes { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[done...]), retryOnInterrupt: true) }
            if count == 0 { break }
            done += count
            if done == bytes.count {
                guard done <= limit else { return nil }
                bytes += repeatElement(0, count: min(done, limit + 1 - done))
            }
        }
        bytes.removeSubrange(done...)
        return (bytes, Data(SHA256.hash(data: bytes)))
    }
}

extension ContentDigest {
    /// Copies the file at `source` to the new file `destination` (mode `permissions`; with
    /// `replacing`, over what `destination` holds, in the same file), hashing as it goes, and returns the SHA-256 and size of what was copied. With `durable`, the copy is flushed
    /// to disk before this returns. A cancelled `progress` stops the copy (`CocoaError.userCancelled`);
    /// any failure removes the partial copy.
    @discardableResult
    package static func copy(
        from source: String, to destination: String, permissions: FilePermissions = [.ownerReadWrite], durable: Bool = true,
        replacing: Bool = false, progress: Progress? = nil
    ) throws -> (digest: Data, size: Int64) {
        let input = try FileDescriptor.open(FilePath(source), .readOnly, options: [.closeOnExec])
        defer { try? input.close() }
        if replacing {
            // Written over only when it is a plain file of one name: a link to it elsewhere (or
            // anything else at the path) is left as it is, and a new file takes the path.
            var status = stat()
            if lstat(destination, &status) == 0, (status.st_mode & S_IFMT) != S_IFREG || status.st_nlink > 1 { unlink(destination) }
        }
        // A file replaced is written over and then cut to the new size, not emptied first: freeing
        // its blocks to allocate them again was most of a small snapshot's cost.
        let output = try FileDescriptor.open(
            FilePath(destination), .writeOnly, options: replacing ? [.create, .closeOnExec] : [.create, .exclusiveCreate, .closeOnExec], permissions: permissions)
        var hasher = SHA256()
        var size: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        do {
            try output.closeAfter {
                while true {
                    if progress?.isCancelled == true {
                        throw CocoaError(.userCancelled, userInfo: [NSLocalizedDescriptionKey: "the copy was cancelled"])
                    }
                    let count = try input.read(into: buffer, retryOnInterrupt: true)
                    if count == 0 { break }
                    let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                    hasher.update(bufferPointer: chunk)
                    _ = try output.writeAll(chunk)
                    size += Int64(count)
                    progress?.completedUnitCount = size
                }
                if replacing, ftruncate(output.rawValue, off_t(size)) != 0 { throw Errno(rawValue: errno) }
                if durable, fsync(output.rawValue) != 0 { throw Errno(rawValue: errno) }
            }
        } catch {
            unlink(destination)
            throw error
        }
        return (Data(hasher.finalize()), size)
    }
}
