import Crypto
package import Foundation
import SystemPackage

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
}
