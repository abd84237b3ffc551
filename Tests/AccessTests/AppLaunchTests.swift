import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Starting apps: `folio run` (plain and sandboxed), `folio open`, containers and ubiquity containers.
@Suite("Running and opening apps", .serialized, .elasticPool)
struct AppLaunchTests {
    let alpha = IsolationFixture.alpha
    let beta = IsolationFixture.beta
    var helper: String { ProcessRunner.builtExecutable("FolioAppHelper").path }

    private func json(_ output: ProcessRunner.Output) throws -> WireValue {
        guard let line = output.stdout.split(separator: "\n").last, let value = try? WireValue(parsing: Array(line.utf8)) else {
            throw TestFailure("no JSON (status \(output.status)): \(output.stdout) \(output.stderr)")
        }
        return value
    }

    /// `folio run --app`: the container is home; `url(forUbiquityContainerIdentifier:)` is nil until
    /// a drive is configured, then the app's container in the Drive.
    @Test func runGivesTheAppItsContainer() throws {
        let world = try IsolationFixture("launch-run")
        let container = world.container(alpha)
        let first = try json(try world.folio(["run", "--app", alpha, "--", helper, "container"]))
        #expect(first["container"]?.stringValue == container.url.path && first["home"]?.stringValue == container.url.path, "\(first)")
        #expect(first["ubiquity"] == .null)
        for folder in [container.documentsURL, container.libraryURL, container.temporaryURL, container.inboxURL] {
            #expect(FileManager.default.fileExists(atPath: folder.path))
        }
        try world.dir.write("config/folio/drive.json", #"{"provider": "folder"}"#)
        let withDrive = try json(try world.folio(["run", "--app", alpha, "--", helper, "container"]))
        #expect(withDrive["ubiquity"]?.stringValue == FolioPaths(environment: world.environment).driveDirectory + "/iCloud.\(alpha)", "\(withDrive)")
        let unknown = try world.folio(["run", "--app", "com.example.Nobody", "--", helper, "container"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no app com.example.Nobody is registered"))
        #expect(try world.folio(["app", "list"]).stdout.contains(container.url.path))
    }

    /// `folio open`: the type's handler (Alpha, Owner of plain text) opens in place with a grant;
    /// Beta, which cannot open in place, gets a copy in its Inbox and no grant.
    @Test func openInPlaceOrAsACopy() throws {
        let world = try IsolationFixture("launch-open")
        let document = try world.dir.write("home/memo.txt", "memo")
        let opened = try world.folio(["open", document.path])
        #expect(opened.status == 0, "\(opened.stderr)")
        let started = try json(opened)
        #expect(started["opened"]?.stringValue == document.path && started["text"]?.stringValue == "memo", "\(started)")
        #expect(try world.folio(["grants", "list", "--app", alpha]).stdout.contains("memo.txt"))

        let copy = try world.folio(["open", "--app", beta, "--no-launch", document.path])
        let inbox = copy.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(inbox == world.container(beta).inboxURL.path + "/memo.txt", "\(copy.stdout) \(copy.stderr)")
        #expect(try String(contentsOfFile: inbox, encoding: .utf8) == "memo")
        #expect(try world.folio(["grants", "list", "--app", beta]).stdout.contains("no grants"))
        #expect(try world.app(beta, ["read", inbox])["text"]?.stringValue == "memo")
        #expect(try world.app(beta, ["read", document.path])["ok"]?.boolValue == false)
    }

    /// `--sandbox`: inside bubblewrap the app sees its container, its granted documents (read-only
    /// ones read-only) and the system; another app's container and the user's other files are not
    /// there at all; and its socket makes it that app, whatever it claims.
    @Test func sandboxedAppsReachOnlyTheirContainerAndGrants() throws {
        guard let bwrap = ProcessRunner.which("bwrap") else {
            print("skipped: bubblewrap is not installed")
            return
        }
        guard try ProcessRunner.run(URL(fileURLWithPath: bwrap), ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]).status == 0
        else {
            print("skipped: bubblewrap cannot create namespaces here (user namespaces disabled)")
            return
        }
        let world = try IsolationFixture("launch-sandbox")
        let mine = world.container(alpha).documentsURL.appendingPathComponent("mine.txt")
        try Data("mine".utf8).write(to: mine)
        let secret = world.container(beta).documentsURL.appendingPathComponent("secret.txt")
        try Data("beta's".utf8).write(to: secret)
        let granted = try world.dir.write("home/granted.txt", "granted")
        let readOnly = try world.dir.write("home/read-only.txt", "read only")
        let private_ = try world.dir.write("home/private.txt", "private")
        #expect(try world.folio(["grants", "add", "--app", alpha, "--write", granted.path]).status == 0)
        #expect(try world.folio(["grants", "add", "--app", alpha, readOnly.path]).status == 0)

        func sandboxed(_ arguments: [String], as claimed: String? = nil) throws -> WireValue {
            var environment = world.environment
            if let claimed { environment["FOLIO_HELPER_CLAIM"] = claimed }
            return try json(try ProcessRunner.folio(["run", "--app", alpha, "--sandbox", "--", helper] + arguments, environment: environment))
        }
        #expect(try sandboxed(["read", mine.path])["text"]?.stringValue == "mine")
        #expect(try sandboxed(["write", granted.path, "edited"])["ok"]?.boolValue == true)
        #expect(try String(contentsOf: granted, encoding: .utf8) == "edited")
        #expect(try sandboxed(["read", readOnly.path])["text"]?.stringValue == "read only")
        let refused = try sandboxed(["write", readOnly.path, "x"])
        #expect(refused["ok"]?.boolValue == false, "\(refused)")
        for path in [secret.path, private_.path] {
            let result = try sandboxed(["read", path])
            #expect(result["ok"]?.boolValue == false, "\(path): \(result)")
        }
        // Claiming to be Beta over Alpha's socket is refused: the process cannot reach the daemon as Beta.
        let impostor = try sandboxed(["read", mine.path], as: beta)
        #expect(impostor["ok"]?.boolValue == false, "\(impostor)")
        #expect(try String(contentsOf: secret, encoding: .utf8) == "beta's" && (try String(contentsOf: readOnly, encoding: .utf8)) == "read only")
    }
}
