import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// What killed transfers leave in the drive's staging folder is counted by `folio drive status`
/// and removed by the next pass.
@Suite("folio drive: staging leftovers", .elasticPool)
struct DriveStagingTests {
    @Test func leftoversAreCountedAndSwept() throws {
        let dir = try TemporaryDirectory("drive-staging")
        var environment = dir.xdgEnvironment()
        environment["FOLIO_PASSWORD"] = nil
        let server = dir.child("server").path
        try FileManager.default.createDirectory(atPath: server, withIntermediateDirectories: true)
        #expect(try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "folder", server], environment: environment).status == 0)
        let first = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let staging = FolioPaths(environment: environment).driveDirectory + "/.folio-staging"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        for name in ["fetch-1", "upload-2", "evict-3"] {
            _ = FileManager.default.createFile(atPath: staging + "/" + name, contents: Data(repeating: 7, count: 1000))
        }
        let before = try ProcessRunner.folio(["drive", "status"], environment: environment)
        #expect(before.stdout.contains("staging: 3 files (3000 bytes)"), "\(before.stdout)")
        let pass = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(pass.status == 0, "\(pass.stderr)")
        // No file is left; the fetch folders stay, empty.
        let left = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
        #expect(left.allSatisfy { (try? FileManager.default.contentsOfDirectory(atPath: staging + "/" + $0))?.isEmpty == true }, "\(left)")
        #expect(try ProcessRunner.folio(["drive", "status"], environment: environment).stdout.contains("staging: empty"))
        // Nothing of the sweep reached the server.
        #expect(try FileManager.default.contentsOfDirectory(atPath: server).allSatisfy { !$0.hasPrefix("fetch-") && !$0.hasPrefix("upload-") })
    }
}
