import Foundation
import FolioSystem
import FolioTesting
import FolioTestTraits
import SystemPackage
import Testing

@Suite("Syscall wrappers", .elasticPool)
struct FolioSystemTests {
    @Test func extendedAttributesRoundTrip() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.write("f", "x")
        let path = FilePath(url.path)
        #expect(try path.extendedAttribute(named: "user.folio.test") == nil)
        let big = [UInt8](repeating: 0x41, count: 3000)  // larger than the first read buffer
        try path.setExtendedAttribute(named: "user.folio.test", to: big)
        #expect(try path.extendedAttribute(named: "user.folio.test") == big)
        #expect(try path.extendedAttributeNames().contains("user.folio.test"))
        try path.removeExtendedAttribute(named: "user.folio.test")
        try path.removeExtendedAttribute(named: "user.folio.test")  // missing is not an error
        #expect(try path.extendedAttribute(named: "user.folio.test") == nil)
        #expect(throws: Errno.self) { try FilePath(dir.path + "/missing").setExtendedAttribute(named: "user.x", to: [1]) }
    }

    @Test func ofdLocksExcludeOtherDescriptionsInTheSameProcess() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.write("lock", "")
        let a = try FileDescriptor.open(FilePath(url.path), .readWrite)
        let b = try FileDescriptor.open(FilePath(url.path), .readWrite)
        defer { try? a.close(); try? b.close() }
        #expect(try a.tryLock(.exclusive))
        #expect(try !b.tryLock(.shared))
        try a.unlock()
        #expect(try b.tryLock(.shared))
        #expect(try a.tryLock(.shared))
        // Upgrading while another description (b) shares conflicts, as it would across processes:
        // refused without throwing, and a keeps its shared lock (b still cannot take it exclusively).
        #expect(try !a.tryLock(.exclusive))
        #expect(try !b.tryLock(.exclusive))
        // Once b lets go, the upgrade succeeds, and it excludes b.
        try b.unlock()
        #expect(try a.tryLock(.exclusive))
        #expect(try !b.tryLock(.shared))
    }

    @Test func ofdLockExcludesAnotherProcess() throws {
        let dir = try TemporaryDirectory()
        let url = try dir.write("lock", "")
        let a = try FileDescriptor.open(FilePath(url.path), .readWrite)
        defer { try? a.close() }
        #expect(try a.tryLock(.exclusive))
        // flock(1) uses a different lock family, so probe with a Python OFD lock in a real process.
        guard let python = ProcessRunner.which("python3") else { return }
        let script = """
            import fcntl, os, struct, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            try:
                fcntl.fcntl(fd, 37, struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 0, 0))  # F_OFD_SETLK
                print('locked')
            except OSError:
                print('busy')
            """
        let out = try ProcessRunner.run(URL(fileURLWithPath: python), ["-c", script, url.path])
        #expect(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "busy")
        try a.unlock()
        let again = try ProcessRunner.run(URL(fileURLWithPath: python), ["-c", script, url.path])
        #expect(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "locked")
    }

    @Test func atomicWriteReplacesWholeAndLeavesNoTemporaryFiles() throws {
        let dir = try TemporaryDirectory()
        let target = dir.path + "/file"
        try AtomicFile.write(Data("old".utf8), to: target)
        try AtomicFile.write(Data("new content".utf8), to: target)
        #expect(FileManager.default.contents(atPath: target) == Data("new content".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["file"])
        #expect(throws: (any Error).self) { try AtomicFile.write(Data(), to: dir.path + "/missing/file") }
    }

    @Test func fileStatusKinds() throws {
        let dir = try TemporaryDirectory()
        let file = try dir.write("f", "12345")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/l", withDestinationPath: "f")
        let status = try FileStatus(path: FilePath(file.path))
        #expect(status.kind == .regular && status.size == 5)
        #expect(try FileStatus(path: FilePath(dir.path)).kind == .directory)
        #expect(try FileStatus(path: FilePath(dir.path + "/l")).kind == .symbolicLink)
        #expect(try FileStatus(path: FilePath(dir.path + "/l"), followSymlinks: true).kind == .regular)
        #expect(throws: Errno.noSuchFileOrDirectory) { try FileStatus(path: FilePath(dir.path + "/nothing")) }
    }

    @Test func xdgPathsFollowTheEnvironment() {
        let paths = FolioPaths(environment: ["HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/7"])
        #expect(paths.dataHome == "/home/u/.local/share")
        #expect(paths.indexDatabase == "/home/u/.local/state/folio/index.sqlite")
        #expect(paths.socketPath == "/run/user/7/folio/folio.sock")
        #expect(paths.appsDirectory == "/home/u/.local/share/folio/Apps")
        #expect(FolioPaths(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/c"]).configDirectory == "/c/folio")
    }
}
