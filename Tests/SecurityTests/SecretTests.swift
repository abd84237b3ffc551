import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Credentials never rest in plain text and are never printed.
@Suite("Attacks: secrets", .elasticPool)
struct SecretTests {
    /// A password given in the drive's URL is sealed with the other secrets: not in `drive.json`,
    /// not in what `setup` or `status` print.
    @Test func aPasswordInTheDrivesURLIsSealed() throws {
        let dir = try TemporaryDirectory("secret-url")
        var environment = dir.xdgEnvironment()
        environment["FOLIO_PASSWORD"] = nil
        let password = "s3cr3t-\(UUID().uuidString.prefix(8))"
        let setup = try ProcessRunner.folio(["drive", "setup", "webdav", "https://alice:\(password)@dav.example.invalid/remote.php/dav/"], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        #expect(!setup.stdout.contains(password) && !setup.stderr.contains(password))
        #expect(setup.stdout.contains("as alice"), "\(setup.stdout)")
        let paths = FolioPaths(environment: environment)
        let stored = try String(contentsOfFile: paths.driveConfiguration, encoding: .utf8)
        #expect(!stored.contains(password) && !stored.contains("alice:"), "\(stored)")
        #expect(FileManager.default.fileExists(atPath: paths.configDirectory + "/drive.secret"))
        let sealed = try Data(contentsOf: URL(fileURLWithPath: paths.configDirectory + "/drive.secret"))
        #expect(sealed.range(of: Data(password.utf8)) == nil)
        let status = try ProcessRunner.folio(["drive", "status"], environment: environment)
        #expect(!status.stdout.contains(password) && !status.stderr.contains(password), "\(status.stdout) \(status.stderr)")
    }
}
