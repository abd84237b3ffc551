import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("The drive's identity", .elasticPool)
struct UbiquityIdentityTests {
    /// `ubiquityIdentityToken` and `NSUbiquityIdentityDidChange` as Apple's: an app reads the
    /// token at launch (nil: no drive), and is told when the drive is set up, pointed at another
    /// server (a token of its own) and removed; the same server set up again gives the same token.
    @Test func theIdentityTokenChangesWithTheDriveAndAppsAreTold() async throws {
        let dir = try TemporaryDirectory("drive-identity")
        let environment = dir.xdgEnvironment()
        for name in ["one", "two"] { try FileManager.default.createDirectory(atPath: dir.child(name).path, withIntermediateDirectories: true) }
        let app = try BackgroundProcess(ProcessRunner.builtExecutable("FolioAppHelper"), ["identity", "3"], environment: environment)
        defer { app.stop() }
        func tokens() -> [WireValue] {
            app.output.split(separator: "\n").compactMap { (try? WireValue(parsing: Array($0.utf8)))?["token"] }
        }
        #expect(await eventually { tokens() == [.null] }, "\(app.output)")
        let setup = { (folder: String) in try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "folder", dir.child(folder).path], environment: environment) }
        #expect(try setup("one").status == 0)
        #expect(await eventually { tokens().count == 2 }, "\(app.output)")
        let first = try #require(tokens().last?.stringValue)
        #expect(first.hasPrefix("folio-drive:"))
        // The same server again: the same identity, nothing told.
        #expect(try setup("one").status == 0)
        #expect(try setup("two").status == 0)
        #expect(await eventually { tokens().count == 3 }, "\(app.output)")
        let second = try #require(tokens().last?.stringValue)
        #expect(second != first && second.hasPrefix("folio-drive:"))
        try FileManager.default.removeItem(atPath: dir.child("config/folio/drive.json").path)
        #expect(await eventually { tokens().count == 4 }, "\(app.output)")
        #expect(tokens() == [.null, .string(first), .string(second), .null], "\(app.output)")
    }
}
