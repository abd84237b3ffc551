import ArgumentParser
import Folio
import FolioDaemon
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio install --user`: Folio for one user, from the build that runs it.
struct InstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install this build for you: the commands, systemd's socket activation, a menu entry for the browser page, completions and man pages.",
        discussion: """
            Copies folio and folio-tool (and their resources) to PREFIX/bin, writes man pages to \
            PREFIX/share/man/man1, completions for bash, zsh and fish, the menu entry \
            folio-browse.desktop, and the systemd user units folio.socket and folio.service; where \
            systemd's user manager runs, enables the socket (the daemon then starts on demand). \
            What was installed is listed in $XDG_DATA_HOME/folio/installed.txt, which `folio \
            uninstall --user` reads. Nothing needs root.
            """)
    @Flag(help: "Install for the current user (the only kind of install there is).") var user = false
    @Option(help: "Where the commands and man pages go (default: ~/.local).") var prefix: String?

    func run() throws {
        guard user else { throw ValidationError("only per-user installs exist: folio install --user") }
        let paths = FolioPaths()
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        let installation = Installation(paths: paths, prefix: prefix.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? home + "/.local")
        try installation.install()
    }
}

/// `folio uninstall --user`: undoes `folio install --user`.
struct UninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Undo `folio install --user`: stop the units and remove what was installed (your documents and Folio's data stay).")
    @Flag(help: "Uninstall what was installed for the current user.") var user = false

    func run() throws {
        guard user else { throw ValidationError("only per-user installs exist: folio uninstall --user") }
        try Installation.uninstall(paths: FolioPaths())
    }
}

/// The files of a per-user install, and the steps that put them in place and take them away.
struct Installation {
    let paths: FolioPaths
    let prefix: String

    var bin: String { prefix + "/bin" }
    var unitFolder: String { paths.configHome + "/systemd/user" }
    static func manifest(_ paths: FolioPaths) -> String { paths.dataDirectory + "/installed.txt" }

    /// Whether systemd's user manager runs for this user (its private socket is there).
    static func userManagerRuns(_ paths: FolioPaths) -> Bool {
        FileManager.default.fileExists(atPath: paths.runtimeDirectory + "/systemd/private")
    }

    func install() throws {
        var installed: [String] = []
        let fileManager = FileManager.default
        // The commands, from beside the running one: the small front, the tool, their resources.
        let executable = try fileManager.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let built = URL(fileURLWithPath: executable).deletingLastPathComponent().path
        try fileManager.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let resources = (try fileManager.contentsOfDirectory(atPath: built)).filter { $0.hasSuffix(".resources") }.sorted()
        for name in ["folio", "folio-tool"] + resources {
            guard fileManager.fileExists(atPath: built + "/" + name) else { throw ValidationError("\(built)/\(name) is missing: build folio first") }
            try Self.replace(bin + "/" + name, withCopyOf: built + "/" + name)
            installed.append(bin + "/" + name)
        }
        if built.hasSuffix("/debug") {
            printError("note: this is a debug build; for everyday use install a release one (swift build -c release, then .build/release/folio install --user)")
        }

        // Man pages, one per command, from each command's help.
        let man = prefix + "/share/man/man1"
        try fileManager.createDirectory(atPath: man, withIntermediateDirectories: true)
        let pages = ManualPages.pages()
        for (name, text) in pages {
            try Self.write(text, to: man + "/" + name)
            installed.append(man + "/" + name)
        }

        // Completions where each shell looks for a user's own.
        let completions: [(CompletionShell, String)] = [
            (.bash, prefix + "/share/bash-completion/completions/folio"),
            (.zsh, prefix + "/share/zsh/site-functions/_folio"),
            (.fish, paths.configHome + "/fish/completions/folio.fish"),
        ]
        for (shell, path) in completions {
            try Self.write(FolioCommand.completionScript(for: shell), to: path)
            installed.append(path)
        }

        // The menu entry for the browser page.
        let desktop = paths.dataHome + "/applications/folio-browse.desktop"
        try Self.write(
            """
            [Desktop Entry]
            Type=Application
            Name=Folio Documents
            GenericName=Document Browser
            Comment=Browse, search and open your documents and your Drive
            Exec=\(bin)/folio browse
            Icon=folder-documents
            Terminal=false
            Categories=Utility;FileTools;
            Keywords=documents;files;search;drive;

            """, to: desktop)
        installed.append(desktop)

        // The units, running the commands just installed.
        for (name, text) in Self.units(bin: bin) {
            try Self.write(text, to: unitFolder + "/" + name)
            installed.append(unitFolder + "/" + name)
        }
        try Self.write(installed.joined(separator: "\n") + "\n", to: Self.manifest(paths))
        print("installed \(bin)/folio, \(pages.count) man pages, completions for bash, zsh and fish, the menu entry and the systemd units")
        if !ProcessInfo.processInfo.environment["PATH", default: ""].split(separator: ":").contains(Substring(bin)) {
            print("note: \(bin) is not on your PATH; add it (export PATH=\"\(bin):$PATH\")")
        }

        guard Self.userManagerRuns(paths) else {
            print("systemd's user manager does not run here: the units start the daemon from your next login on; until then: folio daemon --background")
            return
        }
        // A daemon started by hand holds the socket the unit is to listen on.
        if let pid = DaemonLock.holder(paths: paths) {
            print("stopping the daemon started by hand (pid \(pid)): systemd starts it on demand from now on")
            try DaemonControl.stop()
        }
        try Self.systemctl(["daemon-reload"])
        try Self.systemctl(["enable", "--now", "folio.socket"])
        print("systemd listens on \(paths.socketPath) and starts the daemon on the first connection (journalctl --user -u folio: its log)")
    }

    static func uninstall(paths: FolioPaths) throws {
        let manifest = manifest(paths)
        guard let text = try? String(contentsOfFile: manifest, encoding: .utf8) else {
            print("nothing to uninstall: no \(manifest)")
            return
        }
        if userManagerRuns(paths) {
            try? systemctl(["disable", "--now", "folio.socket", "folio.service"])
        }
        var removed = 0
        for path in text.split(separator: "\n").map(String.init) where path.hasPrefix("/") {
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed += 1 }
        }
        if userManagerRuns(paths) { try? systemctl(["daemon-reload"]) }
        try FileManager.default.removeItem(atPath: manifest)
        print("removed \(removed) installed files; your documents and Folio's data (\(paths.dataDirectory), \(paths.configDirectory)) stay")
    }

    /// folio.socket and folio.service, as in `contrib/systemd/`, with the installed command.
    static func units(bin: String) -> [(String, String)] {
        [
            ("folio.socket", """
                # Socket activation for the per-user Folio daemon (written by folio install --user).
                [Unit]
                Description=Folio document system (daemon socket)

                [Socket]
                ListenStream=%t/folio/folio.sock
                SocketMode=0600
                DirectoryMode=0700
                RemoveOnStop=yes

                [Install]
                WantedBy=sockets.target

                """),
            ("folio.service", """
                # The per-user Folio daemon, started by folio.socket (written by folio install --user).
                [Unit]
                Description=Folio document system (daemon)
                Requires=folio.socket
                After=folio.socket

                [Service]
                Type=simple
                ExecStart=\(bin)/folio daemon --log-level notice
                Restart=on-failure
                KillSignal=SIGTERM
                TimeoutStopSec=10

                [Install]
                Also=folio.socket

                """),
        ]
    }

    static func systemctl(_ arguments: [String]) throws {
        guard let systemctl = ExecutableSearch.locate("systemctl") else { throw ValidationError("systemctl is not installed") }
        let status = SpawnedProcess.run([systemctl, "--user"] + arguments, timeLimit: .seconds(60))
        guard status == 0 else {
            throw ValidationError("systemctl --user \(arguments.joined(separator: " ")) failed (\(status.map { "exit \($0)" } ?? "not started, or no answer within 60 s"))")
        }
    }

    /// Writes `text` to `path` through a temporary file renamed over it, making its folder.
    static func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Copies `source` (a file or folder) to `path`, replacing what is there only once the copy is
    /// whole (a running `folio` keeps the file it was started from).
    static func replace(_ path: String, withCopyOf source: String) throws {
        let temporary = path + ".installing"
        try? FileManager.default.removeItem(atPath: temporary)
        try FileManager.default.copyItem(atPath: source, toPath: temporary)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            try FileManager.default.removeItem(atPath: path)
        }
        guard rename(temporary, path) == 0 else { throw ValidationError("cannot place \(path): \(String(cString: strerror(errno)))") }
    }
}

/// Man pages made from the commands' own help, one per command shown in `folio --help`.
enum ManualPages {
    /// (file name, roff text) for `folio` and each subcommand, `folio-index-add.1` style.
    static func pages() -> [(String, String)] {
        var pages: [(String, String)] = []
        func visit(_ command: any ParsableCommand.Type, names: [String]) {
            let configuration = command.configuration
            guard configuration.shouldDisplay else { return }
            let title = names.joined(separator: "-")
            let help = names.count == 1 ? FolioCommand.helpMessage(columns: 78) : FolioCommand.helpMessage(for: command, columns: 78)
            var text = ".TH \(title.uppercased()) 1 \"\" \"Folio\" \"Folio Manual\"\n.SH NAME\n\(title) \\- \(escaped(configuration.abstract))\n.SH DESCRIPTION\n.nf\n"
            for line in help.split(separator: "\n", omittingEmptySubsequences: false) { text += escaped(String(line)) + "\n" }
            text += ".fi\n"
            let children = configuration.subcommands.filter { $0.configuration.shouldDisplay }
            if !children.isEmpty || names.count > 1 {
                var related = children.map { (names + [$0.configuration.commandName ?? ""]).joined(separator: "-") + "(1)" }
                if names.count > 1 { related.insert(names.dropLast().joined(separator: "-") + "(1)", at: 0) }
                text += ".SH SEE ALSO\n\(related.joined(separator: ", "))\n"
            }
            pages.append((title + ".1", text))
            for child in children { visit(child, names: names + [child.configuration.commandName ?? "\(child)".lowercased()]) }
        }
        visit(FolioCommand.self, names: ["folio"])
        return pages
    }

    /// A line as roff prints it: backslashes escaped, a leading `.` or `'` kept as text.
    static func escaped(_ line: String) -> String {
        let text = line.replacingOccurrences(of: "\\", with: "\\e")
        return text.hasPrefix(".") || text.hasPrefix("'") ? "\\&" + text : text
    }
}
