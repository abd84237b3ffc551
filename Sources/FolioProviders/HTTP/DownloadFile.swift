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
    private let path: String
    /// The open file, once created (by the first write, or by `finish` for an empty body).
    private var descriptor: Int32 = -1
    private var created = false
    private var closed = false
    private var written: Int64 = 0
    private var hinted: Int64 = 0

    init(path: String) {
        self.path = path
    }

    /// A file neither finished nor discarded (a path the download's cleanup missed) goes, and its
    /// descriptor with it.
    deinit {
        if created, !closed {
            _ = Glibc.close(descriptor)
            unlink(path)
        }
    }

    /// Appends `pieces` (creating the file first); each 32 MiB is handed to the disk as it
    /// arrives, so the caller's final flush is short.
    func write(_ pieces: [ByteBuffer]) throws {
        try create()
        for piece in pieces {
            try piece.withUnsafeReadableBytes { try write($0) }
        }
    }

    /// Appends `bytes` (creating the file first), as ``write(_:)-([ByteBuffer])`` does.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try create()
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
            offset += count
        }
        written += Int64(bytes.count)
        if written - hinted >= 32 << 20 {
            FileDescriptor(rawValue: descriptor).startWriteback(offset: hinted, length: written - hinted)
            hinted = written
        }
    }

    /// The file is whole: it gets the umask's mode (it was its owner's alone while it arrived),
    /// is flushed to disk when `durable`, and is described as it is now.
    func finish(durable: Bool) throws -> FileStatus {
        try create()
        defer { close() }
        guard fchmod(descriptor, FileCreationMask.fileMode) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot set the mode of \(path)"])
        }
        if durable, fsync(descriptor) != 0 {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot flush \(path) to disk"])
        }
        do {
            return try FileStatus(of: FileDescriptor(rawValue: descriptor))
        } catch {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot read the status of \(path): \(error)"])
        }
    }

    /// The download failed: the file goes, if this download made it.
    func discard() {
        guard created else { return }
        close()
        unlink(path)
    }

    /// Creates the file, its owner's alone, where none may be yet.
    private func create() throws {
        guard !created else { return }
        let made = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard made >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        descriptor = made
        created = true
    }

    private func close() {
        guard created, !closed else { return }
        closed = true
        _ = Glibc.close(descriptor)
    }
}
