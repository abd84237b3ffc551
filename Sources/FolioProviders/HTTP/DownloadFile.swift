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

    /// Receives a body of `length` bytes straight into the file's pages: the file is given its
    /// length with its blocks reserved, then mapped, and `fill` fills it a window at a time (a
    /// receive into the mapping is the bytes' one copy; a write would be a second), while
    /// ``PagePopulation`` readies its pages from the end. False, having done nothing, unless the
    /// file is in memory (tmpfs) and its blocks could be reserved: the caller writes instead.
    ///
    /// - Throws: `CocoaError.fileWriteOutOfSpace` when the disk cannot hold `length` bytes, before
    ///   any byte is received; whatever `fill` throws.
    func receive(length: Int64, fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws -> Bool {
        try create()
        // Only on tmpfs is receiving into the mapping the faster way (and there is no writeback to
        // hint at): on ext4 each mapped page's first write zeroes it through the file system, and
        // the writeback that follows write-protects the pages again, interrupting the other
        // processor for every batch; a 1 GiB download took 2.1–2.5 s mapped against 1.3–2.4 s
        // written (docs/benchmarks.md).
        guard written == 0, length > 0, FileDescriptor(rawValue: descriptor).isInMemory else { return false }
        do {
            guard try FileDescriptor(rawValue: descriptor).reserve(length: length) else { return false }
        } catch Errno.noSpace {
            throw CocoaError(
                .fileWriteOutOfSpace, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "no room on the disk for \(length) bytes at \(path)"])
        } catch {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot reserve \(length) bytes at \(path): \(error)"])
        }
        let total = Int(length)
        guard let mapped = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot map \(path): \(String(cString: strerror(errno)))"])
        }
        let mapping = UnsafeMutableRawBufferPointer(start: mapped, count: total)
        let population = PagePopulation(mapping)
        defer {
            population.finish()
            munmap(mapped, total)
        }
        var offset = 0
        while offset < total {
            let count = min(Self.window, total - offset)
            let window = UnsafeMutableRawBufferPointer(rebasing: mapping[offset..<(offset + count)])
            try fill(window)
            offset += count
            population.receiverReached(offset)
            written = Int64(offset)
        }
        return true
    }

    /// The bytes ``receive(length:fill:)`` hands `fill` at a time.
    static let window = 32 << 20

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

    /// Creates the file, its owner's alone, where none may be yet (open for reading too: a mapping of it must be).
    private func create() throws {
        guard !created else { return }
        let made = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
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
