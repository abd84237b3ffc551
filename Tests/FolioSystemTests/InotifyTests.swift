import FolioSystem
import FolioTestTraits
import SystemPackage
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

@Suite("Inotify", .elasticPool)
struct InotifyTests {
    /// The bytes of one `struct inotify_event` with its name padded to `padding` bytes.
    func record(watch: Int32, mask: UInt32, cookie: UInt32 = 0, name: String = "", padding: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: watch) { bytes += $0 }
        withUnsafeBytes(of: mask) { bytes += $0 }
        withUnsafeBytes(of: cookie) { bytes += $0 }
        let length = UInt32(name.isEmpty ? 0 : max(padding, name.utf8.count + 1))
        withUnsafeBytes(of: length) { bytes += $0 }
        bytes += Array(name.utf8)
        bytes += [UInt8](repeating: 0, count: Int(length) - name.utf8.count)
        return bytes
    }

    @Test func decodesRecordsAsTheKernelLaysThemOut() {
        let bytes =
            record(watch: 4, mask: UInt32(IN_MOVED_FROM), cookie: 99, name: "a.txt", padding: 16)
            + record(watch: -1, mask: UInt32(IN_Q_OVERFLOW))
            + record(watch: 4, mask: UInt32(IN_CREATE | IN_ISDIR), name: "d", padding: 16)
        let events = bytes.withUnsafeBytes { Inotify.events(in: $0) }
        #expect(
            events == [
                .init(watch: .init(rawValue: 4), mask: .movedFrom, cookie: 99, name: "a.txt"),
                .init(watch: .init(rawValue: -1), mask: .queueOverflow),
                .init(watch: .init(rawValue: 4), mask: [.create, .isDirectory], name: "d"),
            ])
    }

    @Test func leavesOutARecordCutShort() {
        let bytes = record(watch: 1, mask: UInt32(IN_DELETE), name: "gone", padding: 16)
        let events = bytes.dropLast(4).withUnsafeBytes { Inotify.events(in: $0) }
        #expect(events.isEmpty)
    }

    @Test func reportsAnErrnoForAMissingPath() throws {
        let inotify = try Inotify()
        defer { try? inotify.close() }
        #expect(throws: Errno.noSuchFileOrDirectory) { try inotify.addWatch("/nonexistent/folio", for: .create) }
    }
}
