import ArgumentParser
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Where each of Folio's installed files goes, laid out as distributions lay out tools: the
/// command in `PREFIX/bin`, the tool it hands to and its resources in `PREFIX/lib/folio`, man
/// pages in `PREFIX/share/man/man1`, and completions, the menu entry and systemd's user units
/// where each shell, desktop and systemd looks by default.
struct InstallLayout: Sendable {
    /// `PREFIX`: `~/.local` for a user, `/usr` for Debian's package.
    var prefix: String
    /// The data folder that bash-completion, fish and desktops search: `$XDG_DATA_HOME` for a
    /// user (whatever the prefix), `PREFIX/share` for a system-wide install.
    var dataFolder: String
    /// Where zsh's completion function goes: `PREFIX/share/zsh/site-functions` (on zsh's default
    /// `fpath` for `/usr/local`; for a user the installer offers the `fpath` line for `.zshrc`),
    /// Debian's `vendor-completions` for `/usr`.
    var zshFunctions: String
    /// Where systemd's user units go: `$XDG_CONFIG_HOME/systemd/user` for a user,
    /// `PREFIX/lib/systemd/user` for a system.
    var unitFolder: String
    /// Whether this is a user's install (the units are enabled, a manifest kept for uninstall).
    var isUser: Bool

    var bin: String { prefix + "/bin" }
    /// The tool, its resources and any helper: not for PATH.
    var library: String { prefix + "/lib/folio" }
    var manualFolder: String { prefix + "/share/man/man1" }
    var bashCompletion: String { dataFolder + "/bash-completion/completions/folio" }
    var zshCompletion: String { zshFunctions + "/_folio" }
    var fishCompletion: String { dataFolder + "/fish/vendor_completions.d/folio.fish" }
    var desktopEntry: String { dataFolder + "/applications/folio-browse.desktop" }

    /// A user's install under `prefix` (default `~/.local`).
    static func user(paths: FolioPaths, home: String, prefix: String?) -> InstallLayout {
        let prefix = prefix ?? home + "/.local"
        return InstallLayout(
            prefix: prefix, dataFolder: paths.dataHome, zshFunctions: prefix + "/share/zsh/site-functions",
            unitFolder: paths.configHome + "/systemd/user", isUser: true)
    }

    /// A system-wide install under `prefix` (`/usr` for Debian's package).
    static func system(prefix: String) -> InstallLayout {
        InstallLayout(
            prefix: prefix, dataFolder: prefix + "/share",
            zshFunctions: prefix == "/usr" ? "/usr/share/zsh/vendor-completions" : prefix + "/share/zsh/site-functions",
            unitFolder: prefix + "/lib/systemd/user", isUser: false)
    }

    /// One file to install: its place, and its bytes, from a file or folder of the build or made.
    struct Entry {
        enum Source {
            case copy(String)
            case text(String)
        }
        var path: String
        var source: Source
        var executable = false
    }

    /// Every file of the install: `front` (the `folio` command), and from `toolFolder`, `folio-tool`
    /// and the `.resources` folders beside it.
    func entries(front: String, toolFolder: String) throws -> [Entry] {
        let fileManager = FileManager.default
        var entries: [Entry] = []
        for path in [front, toolFolder + "/folio-tool"] where !fileManager.isExecutableFile(atPath: path) {
            throw InstallFailure("\(path) is missing: build folio first (swift build -c release)")
        }
        entries.append(Entry(path: bin + "/folio", source: .copy(front), executable: true))
        entries.append(Entry(path: library + "/folio-tool", source: .copy(toolFolder + "/folio-tool"), executable: true))
        for name in try fileManager.contentsOfDirectory(atPath: toolFolder).filter({ $0.hasSuffix(".resources") }).sorted() {
            entries.append(Entry(path: library + "/" + name, source: .copy(toolFolder + "/" + name)))
        }
        for page in ManualPage.all() {
            entries.append(Entry(path: manualFolder + "/" + page.fileName, source: .text(page.roff)))
        }
        // bash-completion sources the file: no #! line (Debian's lintian warns of one).
        let bash = FolioCommand.completionScript(for: .bash)
        entries.append(Entry(path: bashCompletion, source: .text(bash.hasPrefix("#!") ? String(bash.drop { $0 != "\n" }.dropFirst()) : bash)))
        entries.append(Entry(path: zshCompletion, source: .text(FolioCommand.completionScript(for: .zsh))))
        entries.append(Entry(path: fishCompletion, source: .text(FolioCommand.completionScript(for: .fish))))
        entries.append(Entry(path: desktopEntry, source: .text(desktopEntryText)))
        for (name, text) in units {
            entries.append(Entry(path: unitFolder + "/" + name, source: .text(text)))
        }
        return entries
    }

    /// The build that runs: the folder of this `folio-tool`, and the `folio` front that goes with
    /// it (beside it in a build folder; `../../bin/folio` from an install's `lib/folio`).
    static func runningBuild() throws -> (front: String, toolFolder: String) {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let toolFolder = (executable as NSString).deletingLastPathComponent
        let beside = toolFolder + "/folio"
        if FileManager.default.isExecutableFile(atPath: beside) { return (beside, toolFolder) }
        return (((toolFolder as NSString).appendingPathComponent("../../bin/folio") as NSString).standardizingPath, toolFolder)
    }

    /// The menu entry for the browser page.
    var desktopEntryText: String {
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

        """
    }

    /// folio.socket and folio.service, as in `contrib/systemd/`, running the installed command.
    var units: [(String, String)] {
        let writer = isUser ? "folio install --user" : "Folio's package"
        return [
            ("folio.socket", """
                # Socket activation for the per-user Folio daemon (written by \(writer)).
                [Unit]
                Description=Folio document system (daemon socket)
                Documentation=man:folio-daemon(1)

                [Socket]
                ListenStream=%t/folio/folio.sock
                SocketMode=0600
                DirectoryMode=0700
                RemoveOnStop=yes

                [Install]
                WantedBy=sockets.target

                """),
            ("folio.service", """
                # The per-user Folio daemon, started by folio.socket (written by \(writer)).
                [Unit]
                Description=Folio document system (daemon)
                Documentation=man:folio-daemon(1)
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

    /// What `place` did: the files written and the folders it had to make (parents first).
    struct Placed {
        var files: [String] = []
        var folders: [String] = []
    }

    /// Writes `entries` under `root` (empty for the real places, a staging folder for a package),
    /// each file whole before it replaces what is there (a running `folio` keeps the file it was
    /// started from), folders 0755 and files 0644 or 0755 whatever the umask. Returns what it
    /// wrote and the folders it made, by their places without `root`.
    static func place(_ entries: [Entry], under root: String = "") throws -> Placed {
        var placed = Placed()
        if !root.isEmpty { try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) }
        for entry in entries {
            let target = root + entry.path
            placed.folders += try makeFolders(for: target, under: root)
            let temporary = target + ".installing"
            try? FileManager.default.removeItem(atPath: temporary)
            switch entry.source {
            case .copy(let source):
                try FileManager.default.copyItem(atPath: source, toPath: temporary)
            case .text(let text):
                try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            }
            try setModes(temporary, executable: entry.executable)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: target, isDirectory: &isFolder), isFolder.boolValue {
                try FileManager.default.removeItem(atPath: target)
            }
            guard rename(temporary, target) == 0 else { throw InstallFailure("cannot place \(target): \(String(cString: strerror(errno)))") }
            placed.files.append(entry.path)
        }
        return placed
    }

    /// Makes the missing folders above `path` (mode 0755), returning them (without `root`),
    /// outermost first.
    static func makeFolders(for path: String, under root: String) throws -> [String] {
        var missing: [String] = []
        var folder = (path as NSString).deletingLastPathComponent
        while folder.count > root.count && !FileManager.default.fileExists(atPath: folder) {
            missing.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        for made in missing.reversed() {
            guard mkdir(made, 0o755) == 0 || errno == EEXIST else { throw InstallFailure("cannot make \(made): \(String(cString: strerror(errno)))") }
            chmod(made, 0o755)
        }
        return missing.reversed().map { String($0.dropFirst(root.count)) }
    }

    /// Sets 0755 on folders and executables and 0644 on other files at and below `path`.
    static func setModes(_ path: String, executable: Bool) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return }
        chmod(path, isFolder.boolValue || executable ? 0o755 : 0o644)
        guard isFolder.boolValue else { return }
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            try setModes(path + "/" + name, executable: false)
        }
    }
}

/// An install or package step that failed: said in one sentence, without the usage.
struct InstallFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
