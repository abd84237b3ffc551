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
        abstract: "Install this build for you: the command, man pages, completions, a menu entry for the browser page and systemd's socket activation.",
        discussion: """
            Puts folio in PREFIX/bin, the tool it runs and its resources in PREFIX/lib/folio, man pages in \
            PREFIX/share/man/man1, completions where bash ($XDG_DATA_HOME/bash-completion), fish \
            ($XDG_DATA_HOME/fish/vendor_completions.d) and zsh (PREFIX/share/zsh/site-functions, with the \
            fpath line for .zshrc printed) look, the menu entry folio-browse.desktop, and the systemd user \
            units folio.socket and folio.service; where systemd's user manager runs, enables the socket (the \
            daemon then starts on demand). What was installed, and the folders made for it, are listed in \
            $XDG_DATA_HOME/folio/installed.txt, which `folio uninstall --user` reads. Nothing needs root.
            """)
    @Flag(help: "Install for the current user (the only kind of install this command makes; Debian's package is the system-wide one).") var user = false
    @Option(help: "Where the command, its tool and the man pages go (default: ~/.local).") var prefix: String?

    func run() throws {
        guard user else { throw ValidationError("only per-user installs exist here: folio install --user (system-wide: folio package deb)") }
        let paths = FolioPaths()
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        let layout = InstallLayout.user(paths: paths, home: home, prefix: prefix.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        try Installation(paths: paths, layout: layout).install()
    }
}

/// `folio uninstall --user`: undoes `folio install --user`.
struct UninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Undo `folio install --user`: stop the units and remove what was installed (your documents and Folio's data stay).")
    @Flag(help: "Uninstall what was installed for the current user.") var user = false

    func run() throws {
        guard user else { throw ValidationError("only per-user installs exist here: folio uninstall --user") }
        try Installation.uninstall(paths: FolioPaths())
    }
}

/// A user's install: the layout's files put in place and listed, and taken away again.
struct Installation {
    let paths: FolioPaths
    let layout: InstallLayout

    static func manifest(_ paths: FolioPaths) -> String { paths.dataDirectory + "/installed.txt" }

    /// Whether systemd's user manager runs for this user (its private socket is there).
    static func userManagerRuns(_ paths: FolioPaths) -> Bool {
        FileManager.default.fileExists(atPath: paths.runtimeDirectory + "/systemd/private")
    }

    /// What an earlier install listed: its files, and the folders it made.
    static func listed(_ paths: FolioPaths) -> InstallLayout.Placed? {
        guard let text = try? String(contentsOfFile: manifest(paths), encoding: .utf8) else { return nil }
        var listed = InstallLayout.Placed()
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("/") {
                listed.files.append(line)
            } else if line.hasPrefix("folder /") {
                listed.folders.append(String(line.dropFirst("folder ".count)))
            }
        }
        return listed
    }

    func install() throws {
        let (front, toolFolder) = try InstallLayout.runningBuild()
        let entries = try layout.entries(front: front, toolFolder: toolFolder)
        let earlier = Self.listed(paths)
        var placed = try InstallLayout.place(entries)
        // Files an earlier install put where this one puts none (an older layout) go.
        for path in Set(earlier?.files ?? []).subtracting(placed.files) {
            try? FileManager.default.removeItem(atPath: path)
        }
        let manifest = Self.manifest(paths)
        placed.folders = (earlier?.folders ?? []) + placed.folders + (try InstallLayout.makeFolders(for: manifest, under: ""))
        var seen = Set<String>()
        placed.folders = placed.folders.filter { seen.insert($0).inserted }
        try Data((placed.files + placed.folders.map { "folder " + $0 }).map { $0 + "\n" }.joined().utf8)
            .write(to: URL(fileURLWithPath: manifest), options: .atomic)
        if toolFolder.hasSuffix("/debug") {
            printError("note: this is a debug build; for everyday use install a release one (swift build -c release, then .build/release/folio install --user)")
        }
        let pages = entries.filter { $0.path.hasPrefix(layout.manualFolder + "/") }.count
        print("installed \(layout.bin)/folio (its tool in \(layout.library)), \(pages) man pages, completions for bash, zsh and fish, the menu entry and the systemd units")
        if !ProcessInfo.processInfo.environment["PATH", default: ""].split(separator: ":").contains(Substring(layout.bin)) {
            print("note: \(layout.bin) is not on your PATH; add it (export PATH=\"\(layout.bin):$PATH\")")
        }
        print("zsh: completions load once ~/.zshrc has, before compinit: fpath=(\(layout.zshFunctions) $fpath)")

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

    /// Removes the files the manifest lists, then the folders the installs made that are empty now
    /// (deepest first), then the manifest: the home is as it was before the first install, but
    /// for what was added to those folders since.
    static func uninstall(paths: FolioPaths) throws {
        guard let listed = listed(paths) else {
            print("nothing to uninstall: no \(manifest(paths))")
            return
        }
        if userManagerRuns(paths) {
            try? systemctl(["disable", "--now", "folio.socket", "folio.service"])
        }
        var removed = 0
        for path in listed.files {
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed += 1 }
        }
        if userManagerRuns(paths) { try? systemctl(["daemon-reload"]) }
        try FileManager.default.removeItem(atPath: manifest(paths))
        var kept: [String] = []
        for folder in listed.folders.sorted(by: { $0.count > $1.count }) where rmdir(folder) != 0 && errno != ENOENT {
            kept.append(folder)
        }
        print("removed \(removed) installed files; your documents and Folio's data (\(paths.dataDirectory), \(paths.configDirectory)) stay")
        if !kept.isEmpty { print("kept \(kept.count) folders the install made, which hold other files now: \(kept.sorted().joined(separator: ", "))") }
    }

    static func systemctl(_ arguments: [String]) throws {
        guard let systemctl = ExecutableSearch.locate("systemctl") else { throw InstallFailure("systemctl is not installed") }
        let status = SpawnedProcess.run([systemctl, "--user"] + arguments, timeLimit: .seconds(60))
        guard status == 0 else {
            throw InstallFailure("systemctl --user \(arguments.joined(separator: " ")) failed (\(status.map { "exit \($0)" } ?? "not started, or no answer within 60 s"))")
        }
    }
}

