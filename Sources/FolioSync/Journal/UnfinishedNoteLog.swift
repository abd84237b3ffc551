#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import Foundation
import Synchronization

/// The notes of unfinished transfers (``UnfinishedTransfer``) written during a pass, each appended
/// to a log file beside the journal's database with one `write`, from the file-work job of the work
/// it must come before (an upload's snapshot, a download's placement: ``FetchLanding``). The pass's
/// end moves them into the journal (`sync_unfinished`) and empties the log; a pass that starts
/// after a crash moves those the log still holds first (``SyncEngine``).
///
/// A note in the journal cost an SQLite transaction (a b-tree insert, the WAL's frame and locks):
/// a sixth of a small download's processor time. A note here is durable as the journal's commits
/// are (the database is in WAL mode with `synchronous = NORMAL`): once written, a process killed at
/// any point keeps it; a machine that stops keeps it once the system wrote it out.
///
/// Each record: its body's length and its CRC-32 (4 bytes each, little-endian),
/// then the body: flags (1: a download; 2: with a hash), the fingerprint's device, inode, size and
/// date (the date's bits), the path's length (2 bytes) and bytes, the hash's length (1 byte) and
/// bytes. A record cut short by a crash, or anything that does not read as one, ends the log: what
/// follows it is not read (the log is emptied before the next pass appends to it).
final class UnfinishedNoteLog: Sendable {
    let path: String
    /// The log, opened to append (-1 until the first note).
    private let descriptor = Mutex<Int32>(-1)

    /// The log at `path`, not opened until a note is written.
    init(path: String) {
        self.path = path
    }

    deinit {
        descriptor.withLock { if $0 >= 0 { close($0) } }
    }

    /// Appends the note. Blocks: call it from a thread for blocking work (``SyncFileWork``, a
    /// provider's), never from the cooperative pool.
    func write(_ path: SyncPath, _ transfer: UnfinishedTransfer) throws {
        let record = Self.record(path, transfer)
        let file = try descriptor.withLock { descriptor -> Int32 in
            if descriptor < 0 {
                descriptor = open(self.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { throw Self.error("open", errno) }
            }
            return descriptor
        }
        // One write: appends of the same file are not interleaved.
        let written = record.withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
        guard written == record.count else { throw Self.error("write", written < 0 ? errno : EIO) }
    }

    /// The notes the log at `path` holds, in the order written (none when there is no log), up to
    /// the first record that does not read whole.
    static func read(_ path: String) throws -> [(SyncPath, UnfinishedTransfer)] {
        guard let data = FileManager.default.contents(atPath: path) else {
            if access(path, F_OK) != 0, errno == ENOENT { return [] }
            throw error("read", errno)
        }
        return parse(Array(data))
    }

    /// Whether the log holds any note.
    var holdsNotes: Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_size > 0
    }

    /// Empties the log (its notes are in the journal now).
    func empty() throws {
        guard truncate(path, 0) == 0 || errno == ENOENT else { throw Self.error("empty", errno) }
    }

    // MARK: Records

    static func record(_ path: SyncPath, _ transfer: UnfinishedTransfer) -> [UInt8] {
        var body: [UInt8] = []
        let hash = transfer.hash.map { Array($0.utf8.prefix(255)) }
        body.append((transfer.isDownload ? 1 : 0) | (hash != nil ? 2 : 0))
        append(transfer.fingerprint.device, to: &body)
        append(transfer.fingerprint.inode, to: &body)
        append(UInt64(bitPattern: transfer.fingerprint.size), to: &body)
        append(transfer.fingerprint.modified.bitPattern, to: &body)
        let name = path.bytes.prefix(Int(UInt16.max))
        body.append(UInt8(name.count & 0xFF))
        body.append(UInt8(name.count >> 8))
        body.append(contentsOf: name)
        body.append(UInt8(hash?.count ?? 0))
        body.append(contentsOf: hash ?? [])
        var record: [UInt8] = []
        record.reserveCapacity(8 + body.count)
        append(UInt32(body.count), to: &record)
        append(checksum(body[...]), to: &record)
        record.append(contentsOf: body)
        return record
    }

    static func parse(_ bytes: [UInt8]) -> [(SyncPath, UnfinishedTransfer)] {
        var notes: [(SyncPath, UnfinishedTransfer)] = []
        var at = 0
        while bytes.count - at >= 8 {
            let length = Int(integer(bytes, at, 4))
            let start = at + 8
            guard length >= 36, length <= bytes.count - start, UInt32(integer(bytes, at + 4, 4)) == checksum(bytes[start..<(start + length)]) else { break }
            let body = Array(bytes[start..<(start + length)])
            guard let note = note(body) else { break }
            notes.append(note)
            at = start + length
        }
        return notes
    }

    private static func note(_ body: [UInt8]) -> (SyncPath, UnfinishedTransfer)? {
        let flags = body[0]
        let fingerprint = LocalFingerprint(
            device: integer(body, 1, 8), inode: integer(body, 9, 8), size: Int64(bitPattern: integer(body, 17, 8)),
            modified: Double(bitPattern: integer(body, 25, 8)))
        let pathLength = Int(integer(body, 33, 2))
        guard flags & ~3 == 0, body.count >= 36 + pathLength, pathLength > 0 else { return nil }
        let hashLength = Int(body[35 + pathLength])
        guard body.count == 36 + pathLength + hashLength, flags & 2 != 0 || hashLength == 0 else { return nil }
        let hash = flags & 2 == 0 ? nil : String(decoding: body[(36 + pathLength)...], as: UTF8.self)
        return (SyncPath(bytes: Array(body[35..<(35 + pathLength)])), UnfinishedTransfer(fingerprint: fingerprint, hash: hash, isDownload: flags & 1 != 0))
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func integer(_ bytes: [UInt8], _ at: Int, _ count: Int) -> UInt64 {
        (0..<count).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) }
    }

    /// Finds a record a crash cut short, not a forged one (the log is the user's own).
    private static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var sum = CRC32()
        sum.update(bytes)
        return sum.value
    }

    private static func error(_ operation: String, _ code: Int32) -> CocoaError {
        CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "the journal's note log could not \(operation): \(String(cString: strerror(code)))"])
    }
}
