import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Folio's folders and database are the user's alone, whatever the umask and whatever modes an
/// older version left.
@Suite("Attacks: file modes", .serialized, .elasticPool)
struct FileModeTests {
    private func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o777
    }

    @Test func foldersAre0700AndTheDatabase0600() throws {
        let dir = try TemporaryDirectory("modes")
        let environment = dir.xdgEnvironment()
        let paths = FolioPaths(environment: environment)
        // What an older daemon under umask 022 left behind: open folders and a readable database.
        for folder in [paths.stateDirectory, paths.configDirectory, paths.dataDirectory, paths.versionsDirectory + "/items"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            #expect(chmod(folder, 0o755) == 0)
        }
        _ = FileManager.default.createFile(atPath: paths.indexDatabase, contents: nil, attributes: [.posixPermissions: 0o644])
        let old = umask(0o022)
        defer { umask(old) }
        let daemon = try DaemonProcess(environment: environment)
        defer { daemon.stop() }
        _ = try daemon.waitForListening()
        // The version store too: the names of the user's documents are in its manifests' folder.
        for folder in [
            paths.stateDirectory, paths.configDirectory, paths.dataDirectory, paths.appsDirectory, paths.containersDirectory, paths.socketDirectory,
            paths.versionsDirectory, paths.versionsDirectory + "/items",
        ] {
            #expect(mode(folder) == 0o700, "\(folder): \(String(mode(folder) ?? 0, radix: 8))")
        }
        for file in [paths.indexDatabase, paths.indexDatabase + "-wal", paths.indexDatabase + "-shm"] {
            #expect(mode(file) == 0o600, "\(file): \(String(mode(file) ?? 0, radix: 8))")
        }
    }
}
