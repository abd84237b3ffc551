import Foundation
import FolioTesting
import FolioTestTraits
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio install --user` and `folio uninstall --user` on an empty home: what lands where, that
/// the installed commands run, man pages render, bash completes, and that uninstalling leaves the
/// home as it was.
@Suite("folio install --user", .elasticPool)
struct InstallTests {
    /// Every path below `root`, with `/` after folders.
    static func tree(_ root: String) -> Set<String> {
        var paths = Set<String>()
        guard let walker = FileManager.default.enumerator(atPath: root) else { return paths }
        while let path = walker.nextObject() as? String {
            paths.insert(walker.fileAttributes?[.type] as? FileAttributeType == .typeDirectory ? path + "/" : path)
        }
        return paths
    }

    @Test func installsRunsAndUninstalls() throws {
        let dir = try TemporaryDirectory("install")
        var environment = dir.xdgEnvironment()
        environment["PATH"] = "/usr/bin:/bin"
        let home = environment["HOME"]!
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let before = Self.tree(dir.path)
        let installed = try ProcessRunner.folio(["install", "--user"], environment: environment)
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("is not on your PATH"))
        #expect(installed.stdout.contains("systemd's user manager does not run here"))
        #expect(installed.stdout.contains("fpath=(\(home)/.local/share/zsh/site-functions $fpath)"))

        // The command in bin; the tool it runs and its resources in lib/folio, not on PATH.
        let bin = home + "/.local/bin", library = home + "/.local/lib/folio"
        #expect(try FileManager.default.contentsOfDirectory(atPath: bin) == ["folio"])
        #expect(FileManager.default.isExecutableFile(atPath: library + "/folio-tool"))
        let resources = try FileManager.default.contentsOfDirectory(atPath: library).filter { $0.hasSuffix(".resources") }
        #expect(resources.contains("Folio_FolioDaemon.resources"), "\(resources)")
        // The installed command runs from where it was put (its front finds the tool in ../lib/folio).
        let types = try ProcessRunner.run(URL(fileURLWithPath: bin + "/folio"), ["types", "show", "jpg"], environment: environment)
        #expect(types.status == 0 && types.stdout.contains("identifier: public.jpeg"), "\(types.stderr)")
        let version = try ProcessRunner.run(URL(fileURLWithPath: bin + "/folio"), ["--version"], environment: environment)
        #expect(version.status == 0 && version.stdout.hasPrefix("0.") && version.stdout.contains("commit "), "\(version.stdout) \(version.stderr)")

        // A man page for each command shown, each rendering with a synopsis and examples.
        let man = home + "/.local/share/man/man1"
        let pages = try FileManager.default.contentsOfDirectory(atPath: man).sorted()
        #expect(pages.contains("folio.1") && pages.contains("folio-index-add.1") && pages.contains("folio-drive-path.1") && pages.contains("folio-package-deb.1"))
        #expect(!pages.contains("folio-extract-worker.1") && !pages.contains("folio-help.1"), "a hidden command has a page")
        for page in pages {
            let rendered = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/man"), ["-l", man + "/" + page], environment: environment.merging(["MANWIDTH": "80", "MANPAGER": "cat"]) { $1 })
            #expect(rendered.status == 0, "\(page): \(rendered.stderr)")
            for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "EXAMPLES", "FILES", "ENVIRONMENT", "EXIT STATUS", "SEE ALSO"] {
                #expect(rendered.stdout.contains("\n" + section + "\n"), "\(page) renders no \(section)")
            }
            #expect(!rendered.stderr.contains("warning"), "\(page): \(rendered.stderr)")
        }
        let sync = try String(contentsOfFile: man + "/folio-drive-sync.1", encoding: .utf8)
        #expect(sync.contains(".SH SYNOPSIS") && sync.contains("\\fB\\-\\-confirm\\-deletions\\fR") && sync.contains("folio drive sync \\-\\-confirm\\-deletions"))

        // Completions where each shell looks: bash-completion's user folder under XDG_DATA_HOME
        // (bash completes `folio dr<TAB>` through bash-completion's own loader), fish's vendor
        // folder, zsh's site-functions under the prefix (on zsh's fpath once .zshrc has the line
        // the installer printed).
        #expect(try String(contentsOfFile: home + "/.local/share/zsh/site-functions/_folio", encoding: .utf8).hasPrefix("#compdef folio"))
        #expect(try String(contentsOfFile: dir.path + "/data/fish/vendor_completions.d/folio.fish", encoding: .utf8).contains("complete -c 'folio'"))
        let completion = """
            source /usr/share/bash-completion/bash_completion
            __load_completion folio || exit 3
            spec=$(complete -p folio); function=${spec##*-F }; function=${function%% *}
            COMP_LINE="folio dr"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(folio dr); COMP_CWORD=1
            "$function" folio dr folio
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let completed = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["--norc", "--noprofile", "-c", completion], environment: environment)
        #expect(completed.status == 0 && completed.stdout == "drive\n", "bash completed `folio dr` to \(completed.stdout.debugDescription): \(completed.stderr)")

        // fish completes it too, from its vendor folder under XDG_DATA_HOME (the command on PATH);
        // fish's own configuration (it writes fish_variables) goes to a folder of its own.
        let fishConfiguration = try TemporaryDirectory("install-fish")
        let fish = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/fish"), ["-c", "complete -C 'folio dr'"],
            environment: environment.merging(["PATH": bin + ":/usr/bin:/bin", "XDG_CONFIG_HOME": fishConfiguration.path]) { $1 })
        #expect(fish.status == 0 && fish.stdout.hasPrefix("drive\t"), "fish completed `folio dr` to \(fish.stdout.debugDescription): \(fish.stderr)")

        // The menu entry and the units name the installed command.
        let desktop = try String(contentsOfFile: dir.path + "/data/applications/folio-browse.desktop", encoding: .utf8)
        #expect(desktop.contains("Exec=\(bin)/folio browse\n"))
        if let validate = ["/usr/bin/desktop-file-validate"].first(where: FileManager.default.isExecutableFile(atPath:)) {
            let validated = try ProcessRunner.run(URL(fileURLWithPath: validate), [dir.path + "/data/applications/folio-browse.desktop"])
            #expect(validated.status == 0, "\(validated.stdout)")
        }
        let service = try String(contentsOfFile: dir.path + "/config/systemd/user/folio.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\(bin)/folio daemon"))
        #expect(try String(contentsOfFile: dir.path + "/config/systemd/user/folio.socket", encoding: .utf8).contains("ListenStream=%t/folio/folio.sock"))

        // Installing again replaces in place; uninstalling removes what the list names, the
        // folders the install made, and nothing else: the home is as it was.
        #expect(try ProcessRunner.folio(["install", "--user"], environment: environment).status == 0)
        let listed = try String(contentsOfFile: dir.path + "/data/folio/installed.txt", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("/") }
        #expect(listed.count == pages.count + 8 + resources.count, "\(listed.count) listed, \(pages.count) pages, \(resources.count) resources")
        let removed = try ProcessRunner.folio(["uninstall", "--user"], environment: environment)
        #expect(removed.status == 0 && removed.stdout.contains("removed \(listed.count) installed files"), "\(removed.stdout) \(removed.stderr)")
        #expect(Self.tree(dir.path) == before, "left behind: \(Self.tree(dir.path).subtracting(before).sorted()); gone: \(before.subtracting(Self.tree(dir.path)).sorted())")
        #expect(try ProcessRunner.folio(["uninstall", "--user"], environment: environment).stdout.contains("nothing to uninstall"))
        // Without --user: refused.
        #expect(try ProcessRunner.folio(["install"], environment: environment).status != 0)
    }

    /// A folder the install made that holds a file of the user's by uninstall time is kept, with
    /// that file; Folio's own data stays.
    @Test func uninstallKeepsWhatTheUserAdded() throws {
        let dir = try TemporaryDirectory("install-keep")
        var environment = dir.xdgEnvironment()
        environment["PATH"] = "/usr/bin:/bin"
        let home = environment["HOME"]!
        #expect(try ProcessRunner.folio(["install", "--user"], environment: environment).status == 0)
        try "mine".write(toFile: home + "/.local/bin/my-script", atomically: true, encoding: .utf8)
        try "keep me".write(toFile: dir.path + "/data/folio/Drive-note.txt", atomically: true, encoding: .utf8)
        let removed = try ProcessRunner.folio(["uninstall", "--user"], environment: environment)
        #expect(removed.status == 0 && removed.stdout.contains("kept "), "\(removed.stdout) \(removed.stderr)")
        #expect(try String(contentsOfFile: home + "/.local/bin/my-script", encoding: .utf8) == "mine")
        #expect(FileManager.default.fileExists(atPath: dir.path + "/data/folio/Drive-note.txt"))
        #expect(!FileManager.default.fileExists(atPath: home + "/.local/bin/folio") && !FileManager.default.fileExists(atPath: home + "/.local/lib"))
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
