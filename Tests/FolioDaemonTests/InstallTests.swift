import Foundation
import FolioTesting
import FolioTestTraits
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio install --user` and `folio uninstall --user` on an empty home: what lands where, that
/// the installed commands run, and that uninstalling takes away exactly what was installed.
@Suite("folio install --user", .elasticPool)
struct InstallTests {
    @Test func installsRunsAndUninstalls() throws {
        let dir = try TemporaryDirectory("install")
        var environment = dir.xdgEnvironment()
        environment["PATH"] = "/usr/bin:/bin"
        let home = environment["HOME"]!
        let installed = try ProcessRunner.folio(["install", "--user"], environment: environment)
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("is not on your PATH"))
        #expect(installed.stdout.contains("systemd's user manager does not run here"))

        let bin = home + "/.local/bin"
        for name in ["folio", "folio-tool"] { #expect(FileManager.default.isExecutableFile(atPath: bin + "/" + name), "\(name)") }
        // The installed command runs from where it was put (its front finds the tool beside it).
        let types = try ProcessRunner.run(URL(fileURLWithPath: bin + "/folio"), ["types", "show", "jpg"], environment: environment)
        #expect(types.status == 0 && types.stdout.contains("identifier: public.jpeg"), "\(types.stderr)")

        // A man page for each command shown, in roff.
        let man = home + "/.local/share/man/man1"
        let pages = try FileManager.default.contentsOfDirectory(atPath: man)
        #expect(pages.contains("folio.1") && pages.contains("folio-index-add.1") && pages.contains("folio-drive-sync.1"))
        #expect(!pages.contains("folio-extract-worker.1"), "a hidden command has a page")
        let page = try String(contentsOfFile: man + "/folio-index-add.1", encoding: .utf8)
        #expect(page.hasPrefix(".TH FOLIO-INDEX-ADD 1") && page.contains("USAGE: folio index add <folder>"))

        // Completions, the menu entry and the units name the installed command.
        #expect(try String(contentsOfFile: home + "/.local/share/bash-completion/completions/folio", encoding: .utf8).contains("complete"))
        #expect(try String(contentsOfFile: home + "/.local/share/zsh/site-functions/_folio", encoding: .utf8).hasPrefix("#compdef folio"))
        #expect(try String(contentsOfFile: dir.path + "/config/fish/completions/folio.fish", encoding: .utf8).contains("complete -c 'folio'"))
        let desktop = try String(contentsOfFile: dir.path + "/data/applications/folio-browse.desktop", encoding: .utf8)
        #expect(desktop.contains("Exec=\(bin)/folio browse\n"))
        if let validate = ["/usr/bin/desktop-file-validate"].first(where: FileManager.default.isExecutableFile(atPath:)) {
            let validated = try ProcessRunner.run(URL(fileURLWithPath: validate), [dir.path + "/data/applications/folio-browse.desktop"])
            #expect(validated.status == 0, "\(validated.stdout)")
        }
        let service = try String(contentsOfFile: dir.path + "/config/systemd/user/folio.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\(bin)/folio daemon"))
        #expect(try String(contentsOfFile: dir.path + "/config/systemd/user/folio.socket", encoding: .utf8).contains("ListenStream=%t/folio/folio.sock"))

        // Installing again replaces in place; uninstalling removes what the list names, and keeps data.
        #expect(try ProcessRunner.folio(["install", "--user"], environment: environment).status == 0)
        let listed = try String(contentsOfFile: dir.path + "/data/folio/installed.txt", encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(listed.count == pages.count + 10, "\(listed.count) listed, \(pages.count) pages")
        try "keep me".write(toFile: dir.path + "/data/folio/Drive-note.txt", atomically: true, encoding: .utf8)
        let removed = try ProcessRunner.folio(["uninstall", "--user"], environment: environment)
        #expect(removed.status == 0 && removed.stdout.contains("removed \(listed.count) installed files"), "\(removed.stdout) \(removed.stderr)")
        for path in listed { #expect(!FileManager.default.fileExists(atPath: path), "\(path) is still there") }
        #expect(FileManager.default.fileExists(atPath: dir.path + "/data/folio/Drive-note.txt"))
        #expect(try ProcessRunner.folio(["uninstall", "--user"], environment: environment).stdout.contains("nothing to uninstall"))
        // Without --user: refused.
        #expect(try ProcessRunner.folio(["install"], environment: environment).status != 0)
    }

    /// With systemd's user manager (a private one, on the test's folders): the socket enabled, the
    /// daemon started by the first connection, and uninstalling stops it. Needs a machine booted
    /// with systemd (`/run/systemd/system`); containers without it skip this test.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/run/systemd/system"), "systemd's user manager runs only on a machine booted with systemd"))
    func socketActivationThroughTheUserManager() async throws {
        let dir = try TemporaryDirectory("install-systemd")
        let environment = dir.xdgEnvironment()
        let runtime = environment["XDG_RUNTIME_DIR"]!
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let manager = Process()
        manager.executableURL = URL(fileURLWithPath: "/usr/lib/systemd/systemd")
        manager.arguments = ["--user"]
        manager.environment = environment
        try manager.run()
        defer {
            manager.terminate()
            manager.waitUntilExit()
        }
        #expect(await eventually { FileManager.default.fileExists(atPath: runtime + "/systemd/private") })
        let installed = try ProcessRunner.folio(["install", "--user"], environment: environment)
        #expect(installed.status == 0 && installed.stdout.contains("systemd listens on"), "\(installed.stdout) \(installed.stderr)")
        // The first connection starts the daemon.
        let status = try ProcessRunner.folio(["status"], environment: environment)
        #expect(status.status == 0 && status.stdout.contains("the daemon's own coordinations"), "\(status.stdout) \(status.stderr)")
        #expect(try ProcessRunner.folio(["uninstall", "--user"], environment: environment).status == 0)
        #expect(await eventually { !FileManager.default.fileExists(atPath: runtime + "/folio/folio.sock") })
    }
}
