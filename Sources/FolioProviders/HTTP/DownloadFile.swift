#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import FolioSystem
import Foundation
import NIOCore
import SystemPackage

/// The file a download writes into, worked on from the file-work pool (``ProviderFileWork``): its
/// writes, its mode once whole, and its removal when the download fails. Used by one download at a
/// time, its calls one after another.
final class DownloadFile: @unchecked Sendable {
    private let descriptor: Int32
    private let path: String
    private var written: Int64 = 0
    private var hinted: Int64 = 0
    private var closed = false

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Appends `bytes`; each 32 MiB is handed to the disk as it arrives, so the caller's final
    /// flush is short.
    func write(_ bytes: ByteBuffer) throws {
        try bytes.withUnsafeReadableBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
                }
                offset += count
            }
        }
        written += Int64(bytes.readableBytes)
        if written - hinted >= 32 << 20 {
            FileDescriptor(rawValue: descriptor).startWriteback(offset: hinted, length: written - hinted)
            hinted = written
        }
    }

    /// The file is whole: it gets the umask's mode (it was its owner's alone while it arrived).
    func finish() throws {
        defer { close() }
        guard fchmod(descriptor, FileCreationMask.fileMode) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot set the mode of \(path)"])
        }
    }

    /// The download failed: the file goes.
    func discard() {
        close()
        unlink(path)
    }

    private func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(descriptor)
    }
}
