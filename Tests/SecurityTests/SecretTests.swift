#if canImport(Glibc)
@preconcurrency import Glibc
#endif
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
        // No server answers there: saved unchecked.
        let setup = try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "webdav", "https://alice:\(password)@dav.example.invalid/remote.php/dav/", "--no-check"], environment: environment)
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

/// The key that seals the drive's secret is kept in the session keyring when there is one (a
/// private session bus with GNOME Keyring's Secret Service here), not beside the sealed secret.
@Suite("Attacks: the credentials key", .elasticPool, .enabled(if: SessionBus.runs && TestServer.shouldRun(.moto)))
struct CredentialsKeyTests {
    /// Set up with a keyring: no key file; the keyring holds the key; `status` says so; a sync
    /// against S3 (which refuses a wrong secret) works; without the session bus the secret cannot
    /// be opened, and the error says why.
    @Test func theKeyringKeepsTheKey() async throws {
        let server = try TestServer(.moto)
        let account = try #require(server.s3)
        let bus = try SessionBus()
        defer { bus.stop() }
        let dir = try TemporaryDirectory("secret-keyring")
        var environment = dir.xdgEnvironment()
        environment["FOLIO_PASSWORD"] = account.secretKey
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let paths = FolioPaths(environment: environment)
        let setup = try ProcessRunner.folio(["drive", "setup", "--files", "stubs", "s3", server.baseURL.absoluteString, account.bucket + "/keyring", "--user", account.accessKey], environment: environment)
        #expect(setup.status == 0, "\(setup.stdout)\(setup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: paths.configDirectory + "/credentials.key"), "the key was written beside the secret")
        let stored = try bus.lookup(folder: paths.configDirectory)
        #expect(Data(base64Encoded: stored)?.count == 32, "the keyring holds no key: \(stored.count) bytes")
        let status = try ProcessRunner.folio(["drive", "status"], environment: environment)
        #expect(status.stdout.contains("secret: sealed; its key is in the session keyring"), "\(status.stdout)\(status.stderr)")
        #expect(!status.stdout.contains(account.secretKey))
        try FileManager.default.createDirectory(atPath: paths.driveDirectory, withIntermediateDirectories: true)
        try Data("sealed, and opened".utf8).write(to: URL(fileURLWithPath: paths.driveDirectory + "/note.txt"))
        environment["FOLIO_PASSWORD"] = nil
        let sync = try ProcessRunner.folio(["drive", "sync"], environment: environment)
        #expect(sync.status == 0 && sync.stdout.contains("uploaded 1"), "\(sync.stdout)\(sync.stderr)")
        // The folders alone (no session: a copy, a backup) do not open the secret.
        var alone = environment
        alone["DBUS_SESSION_BUS_ADDRESS"] = nil
        let refused = try ProcessRunner.folio(["drive", "sync"], environment: alone)
        #expect(refused.status != 0 && refused.stderr.contains("session keyring"), "\(refused.stdout)\(refused.stderr)")
    }

    /// A key file from before (set up without a keyring) stays while processes only read the
    /// secret (a daemon without the session must still open it), and moves into the keyring when
    /// the drive is set up again with one; the secret still opens.
    @Test func aKeyFileMovesIntoTheKeyringAtTheNextSetup() async throws {
        let server = try TestServer(.moto)
        let account = try #require(server.s3)
        let dir = try TemporaryDirectory("secret-keyring-move")
        var environment = dir.xdgEnvironment()
        environment["FOLIO_PASSWORD"] = account.secretKey
        let paths = FolioPaths(environment: environment)
        let arguments = ["drive", "setup", "--files", "stubs", "s3", server.baseURL.absoluteString, account.bucket + "/moved", "--user", account.accessKey]
        let setup = try ProcessRunner.folio(arguments, environment: environment)
        #expect(setup.status == 0, "\(setup.stdout)\(setup.stderr)")
        let keyFile = paths.configDirectory + "/credentials.key"
        #expect(FileManager.default.fileExists(atPath: keyFile))
        let before = try ProcessRunner.folio(["drive", "status"], environment: environment)
        #expect(before.stdout.contains("its key is in \(keyFile) (no session keyring reached"), "\(before.stdout)\(before.stderr)")

        let bus = try SessionBus()
        defer { bus.stop() }
        var session = environment
        session["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        session["FOLIO_PASSWORD"] = nil
        try FileManager.default.createDirectory(atPath: paths.driveDirectory, withIntermediateDirectories: true)
        try Data("moved".utf8).write(to: URL(fileURLWithPath: paths.driveDirectory + "/moved.txt"))
        let read = try ProcessRunner.folio(["drive", "sync"], environment: session)
        #expect(read.status == 0 && read.stdout.contains("uploaded 1"), "\(read.stdout)\(read.stderr)")
        #expect(FileManager.default.fileExists(atPath: keyFile), "reading the secret moved its key")

        session["FOLIO_PASSWORD"] = account.secretKey
        let again = try ProcessRunner.folio(arguments, environment: session)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(!FileManager.default.fileExists(atPath: keyFile), "the key file stayed")
        #expect(Data(base64Encoded: try bus.lookup(folder: paths.configDirectory))?.count == 32)
        session["FOLIO_PASSWORD"] = nil
        try Data("after".utf8).write(to: URL(fileURLWithPath: paths.driveDirectory + "/after.txt"))
        let sync = try ProcessRunner.folio(["drive", "sync"], environment: session)
        #expect(sync.status == 0 && sync.stdout.contains("uploaded 1"), "\(sync.stdout)\(sync.stderr)")
        let after = try ProcessRunner.folio(["drive", "status"], environment: session)
        #expect(after.stdout.contains("its key is in the session keyring"), "\(after.stdout)\(after.stderr)")
    }
}

/// A private session bus with GNOME Keyring's Secret Service on it, unlocked, its keyrings in a
/// folder of its own; stopped with the test.
final class SessionBus: @unchecked Sendable {
    static var runs: Bool {
        ["dbus-daemon", "dbus-send", "gnome-keyring-daemon", "secret-tool"].allSatisfy { ProcessRunner.which($0) != nil }
    }

    let home: TemporaryDirectory
    let address: String
    private let bus = Process()
    private let keyring = Process()

    init() throws {
        home = try TemporaryDirectory("session-bus")
        let output = Pipe()
        bus.executableURL = URL(fileURLWithPath: ProcessRunner.which("dbus-daemon")!)
        bus.arguments = ["--session", "--nofork", "--nopidfile", "--print-address=1"]
        bus.standardOutput = output
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        address = ProcessRunner.firstLine(from: output.fileHandleForReading)
        guard address.hasPrefix("unix:") else { throw TestFailure("dbus-daemon printed no address") }
        let password = Pipe()
        keyring.executableURL = URL(fileURLWithPath: ProcessRunner.which("gnome-keyring-daemon")!)
        keyring.arguments = ["--foreground", "--unlock", "--components=secrets"]
        keyring.environment = environment
        keyring.standardInput = password
        keyring.standardOutput = FileHandle.nullDevice
        keyring.standardError = FileHandle.nullDevice
        try keyring.run()
        password.fileHandleForWriting.write(Data("test-keyring".utf8))
        try password.fileHandleForWriting.close()
        // Serving once the Secret Service's name has an owner on the bus.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let owned = try ProcessRunner.run(
                URL(fileURLWithPath: ProcessRunner.which("dbus-send")!),
                ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"],
                environment: environment)
            if owned.stdout.contains("boolean true") { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        stop()
        throw TestFailure("the keyring did not come up on the session bus")
    }

    var environment: [String: String] {
        var environment = home.xdgEnvironment()
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        return environment
    }

    /// What `secret-tool lookup` prints for Folio's key of `folder`.
    func lookup(folder: String) throws -> String {
        let output = try ProcessRunner.run(
            URL(fileURLWithPath: ProcessRunner.which("secret-tool")!), ["lookup", "application", "folio", "kind", "credentials-key", "folder", folder],
            environment: environment)
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() {
        // SIGKILL: gnome-keyring-daemon lingers after SIGTERM while its bus is up.
        for process in [keyring, bus] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
