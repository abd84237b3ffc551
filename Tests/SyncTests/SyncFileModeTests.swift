#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
@testable import FolioProviders
@testable import FolioSync
import FolioServers
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

/// Downloaded files take the mode any new file of the user's gets (the umask's), and keep the
/// server's executable bit where the server tells it (Apache's `executable` property); uploads
/// set that bit from the file's.
@Suite("Modes of downloaded files", .elasticPool)
struct SyncFileModeTests {
    func mode(_ path: String) -> mode_t { mode_t(((try? FileStatus(path: FilePath(path)))?.mode ?? 0) & 0o7777) }

    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func anExecutableOnTheServerArrivesExecutable() async throws {
        let server = try TestServer(.apache)
        let root = try #require(server.root).path
        try Data("#!/bin/sh\necho hello\n".utf8).write(to: URL(fileURLWithPath: root + "/tool.sh"))
        try Data("plain".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
        chmod(root + "/tool.sh", 0o755)
        chmod(root + "/notes.txt", 0o644)
        server.fixOwnership()
        let device = try await SyncDevice("modes", provider: WebDAVProvider(baseURL: server.baseURL))
        let report = try await device.settle()
        #expect(report.downloaded == 2 && report.deferred.isEmpty, "\(report)")
        #expect(mode(device.path("tool.sh")) == FileCreationMask.executableMode, "\(String(mode(device.path("tool.sh")), radix: 8))")
        #expect(mode(device.path("notes.txt")) == FileCreationMask.fileMode, "\(String(mode(device.path("notes.txt")), radix: 8))")

        // New content of the executable replaces the file here, which stays executable; new
        // content of the plain file leaves it as the user had it.
        chmod(device.path("notes.txt"), 0o600)
        try Data("#!/bin/sh\necho hello again\n".utf8).write(to: URL(fileURLWithPath: root + "/tool.sh"))
        try Data("plain, longer".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
        server.fixOwnership()
        let again = try await device.settle()
        #expect(again.downloaded == 2, "\(again)")
        #expect(device.read("tool.sh") == "#!/bin/sh\necho hello again\n")
        #expect(mode(device.path("tool.sh")) & 0o100 != 0)
        #expect(mode(device.path("notes.txt")) == 0o600)
    }

    /// A script made executable here is executable on the server (Apache keeps the property as
    /// the file's mode) and on the other device; sent again without the bit, it is cleared there.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func anExecutableMadeHereIsExecutableOnTheServer() async throws {
        let server = try TestServer(.apache)
        let root = try #require(server.root).path
        let one = try await SyncDevice("modes-one", provider: WebDAVProvider(baseURL: server.baseURL))
        let two = try await SyncDevice("modes-two", provider: WebDAVProvider(baseURL: server.baseURL))
        try one.write("bin/run.sh", "#!/bin/sh\necho run\n")
        try one.write("bin/readme.txt", "not a program")
        chmod(one.path("bin/run.sh"), 0o755)
        let sent = try await one.settle()
        #expect(sent.uploaded == 2 && sent.deferred.isEmpty, "\(sent)")
        #expect(mode(root + "/bin/run.sh") & 0o100 != 0, "\(String(mode(root + "/bin/run.sh"), radix: 8))")
        #expect(mode(root + "/bin/readme.txt") & 0o111 == 0, "\(String(mode(root + "/bin/readme.txt"), radix: 8))")
        #expect(try await two.settle().downloaded == 2)
        #expect(mode(two.path("bin/run.sh")) == FileCreationMask.executableMode && mode(two.path("bin/readme.txt")) == FileCreationMask.fileMode)

        // New content without the bit: the server's is cleared, and the other device's new copy is plain.
        try one.write("bin/run.sh", "#!/bin/sh\necho no longer run\n")
        chmod(one.path("bin/run.sh"), 0o644)
        #expect(try await one.settle().uploaded == 1)
        #expect(mode(root + "/bin/run.sh") & 0o111 == 0, "\(String(mode(root + "/bin/run.sh"), radix: 8))")
        #expect(try await two.settle().downloaded == 1)
        #expect(two.read("bin/run.sh") == "#!/bin/sh\necho no longer run\n")
    }
}
