import ArgumentParser
import Folio
import FolioDaemon
import FolioSync
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio doctor`: checks what Folio needs on this machine and says what to fix.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the daemon, its socket, file modes, inotify limits, sandboxes, tools and the drive's server; print what to fix.",
        discussion: """
            Each check prints ok, warning or problem, and for the last two what to do. Exits 1 when \
            there is a problem. Kernel limits are read from $FOLIO_SYSCTL_DIR when it is set (a copy \
            of /proc/sys, for tests).
            """)
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Skip the drive's server (the check writes and deletes a small file there).") var offline = false

    func run() async throws {
        var doctor = Doctor(paths: FolioPaths())
        doctor.checkDaemon()
        doctor.checkModes()
        doctor.checkInotify()
        doctor.checkSandbox()
        doctor.checkTools()
        if !offline { await doctor.checkDrive() }
        let findings = doctor.findings
        if json {
            let rows = findings.map { finding -> WireValue in
                var row: [String: WireValue] = ["check": .string(finding.check), "state": .string(finding.state.rawValue), "text": .string(finding.text)]
                if let fix = finding.fix { row["fix"] = .string(fix) }
                return .object(row)
            }
            print(String(decoding: WireValue.array(rows).serialized(), as: UTF8.self))
        } else {
            for finding in findings {
                print("\(finding.state.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))\(finding.check.padding(toLength: 13, withPad: " ", startingAt: 0))\(finding.text)")
                if let fix = finding.fix { print("        \("".padding(toLength: 13, withPad: " ", startingAt: 0))fix: \(fix)") }
            }
            let problems = findings.count { $0.state == .problem }, warnings = findings.count { $0.state == .warning }
            print(problems + warnings == 0 ? "all is well" : "\(problems) problem\(problems == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        }
        if findings.contains(where: { $0.state == .problem }) { throw ExitCode.failure }
    }
}

/// The checks of `folio doctor`, each adding its findings.
struct Doctor {
    /// What one check found.
    struct Finding {
        enum State: String { case ok, warning, problem }
        var check: String
        var state: State
        var text: String
        var fix: String?
    }

    let paths: FolioPaths
    var environment = ProcessInfo.processInfo.environment
    private(set) var findings: [Finding] = []
    /// Folders the daemon watches, when it answered.
    private var watchedFolders: Int?

    init(paths: FolioPaths) { self.paths = paths }

    private mutating func add(_ check: String, _ state: Finding.State, _ text: String, fix: String? = nil) {
        findings.append(Finding(check: check, state: state, text: text, fix: fix))
    }

    /// The daemon: holding its lock, answering on its socket.
    mutating func checkDaemon() {
        let socket = paths.socketPath
        guard let pid = DaemonLock.holder(paths: paths) else {
            if FileManager.default.fileExists(atPath: socket) {
                add("daemon", .warning, "no daemon runs, and a socket was left at \(socket)", fix: "start one: folio daemon --background (it replaces the socket)")
            } else {
                add("daemon", .warning, "no daemon runs (apps coordinate within their own process only)",
                    fix: "folio daemon --background, or systemd's socket activation (contrib/systemd/README.md)")
            }
            return
        }
        do {
            watchedFolders = try Self.watchedFolders(socket)
            add("daemon", .ok, "running (pid \(pid)), answering on \(socket)")
        } catch {
            add("daemon", .problem, "pid \(pid) holds the daemon's lock but does not answer on \(socket): \(error)",
                fix: "folio daemon --stop, then folio daemon --background (its log: \(paths.stateDirectory)/daemon.log)")
        }
    }

    /// The number of folders the daemon answering on `socket` watches.
    private static func watchedFolders(_ socket: String) throws -> Int? {
        let daemon = try DaemonCoordinationEngine(socketPath: socket)
        defer { daemon.disconnect() }
        let status: WireValue = try daemon.send(IndexStatus())
        return status["watched_folders"]?.intValue.map { Int($0) }
    }

    /// Folio's folders private to the user, its keys and databases readable by the user alone.
    mutating func checkModes() {
        let folders = [paths.socketDirectory, paths.configDirectory, paths.dataDirectory, paths.stateDirectory]
        let files = [paths.socketPath, paths.indexDatabase, paths.indexNamesDatabase, paths.configDirectory + "/bookmark.key", DriveConfiguration.secretPath(paths), SecretBox.keyPath(paths)]
        var wrong: [String] = []
        var fixes: [String] = []
        for (path, wanted) in folders.map({ ($0, 0o700) }) + files.map({ ($0, 0o600) }) {
            // A handful of paths: Foundation's attributes will do.
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let mode = attributes[.posixPermissions] as? Int, let owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value
            else { continue }
            if owner != getuid() {
                wrong.append("\(path) belongs to uid \(owner)")
                fixes.append("chown \(getuid()) \(path)")
            } else if mode & 0o077 != 0 {
                wrong.append("\(path) is \(String(mode, radix: 8)) (others may reach it)")
                fixes.append("chmod \(String(wanted, radix: 8)) \(path)")
            }
        }
        if wrong.isEmpty {
            add("permissions", .ok, "Folio's folders and keys are yours alone")
        } else {
            add("permissions", .problem, wrong.joined(separator: "; "), fix: fixes.joined(separator: "; "))
        }
    }

    /// A kernel limit, from `$FOLIO_SYSCTL_DIR` or `/proc/sys`.
    private func sysctl(_ name: String) -> Int? {
        let root = environment["FOLIO_SYSCTL_DIR"] ?? "/proc/sys"
        guard let text = try? String(contentsOfFile: root + "/" + name.replacingOccurrences(of: ".", with: "/"), encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// inotify's per-user watch limit against the folders the daemon watches.
    mutating func checkInotify() {
        guard let limit = sysctl("fs.inotify.max_user_watches") else {
            add("inotify", .warning, "fs.inotify.max_user_watches cannot be read: changes may go unseen")
            return
        }
        guard let watched = watchedFolders else {
            add("inotify", .ok, "up to \(limit) folders can be watched (the daemon is not running to say how many it watches)")
            return
        }
        // Other programs (editors, file managers, sync clients) watch folders too.
        let wanted = max(524_288, watched * 2)
        if watched >= limit {
            add("inotify", .problem, "the daemon watches \(watched) folders and the limit is \(limit): changes in the rest go unseen until the next crawl",
                fix: "echo fs.inotify.max_user_watches=\(wanted) | sudo tee -a /etc/sysctl.d/60-folio.conf && sudo sysctl --system")
        } else if watched * 10 > limit * 9 {
            add("inotify", .warning, "the daemon watches \(watched) folders of the \(limit) allowed: other programs may run out",
                fix: "echo fs.inotify.max_user_watches=\(wanted) | sudo tee -a /etc/sysctl.d/60-folio.conf && sudo sysctl --system")
        } else {
            add("inotify", .ok, "\(watched) folders watched of \(limit) allowed")
        }
    }

    /// bubblewrap and the user namespaces it needs (`folio run --sandbox`, the thumbnail and text workers).
    mutating func checkSandbox() {
        guard let bwrap = ExecutableSearch.locate("bwrap", path: environment["PATH"]) else {
            add("sandbox", .problem, "bubblewrap is not installed: `folio run --sandbox` refuses, and thumbnails and documents' text are read without a sandbox",
                fix: "sudo apt-get install bubblewrap")
            return
        }
        if sysctl("user.max_user_namespaces") == 0 {
            add("sandbox", .problem, "user namespaces are off (user.max_user_namespaces = 0): bubblewrap cannot make a sandbox",
                fix: "echo user.max_user_namespaces=15000 | sudo tee -a /etc/sysctl.d/60-folio.conf && sudo sysctl --system")
            return
        }
        if sysctl("kernel.apparmor_restrict_unprivileged_userns") == 1 {
            add("sandbox", .warning, "AppArmor restricts unprivileged user namespaces: bubblewrap may be refused",
                fix: "allow bwrap in an AppArmor profile (see /etc/apparmor.d/bwrap-userns-restrict)")
        }
        // The probe the workers' own sandbox makes (time-limited).
        if Bubblewrap.usable != nil {
            add("sandbox", .ok, "bubblewrap makes sandboxes (\(bwrap))")
        } else {
            add("sandbox", .problem, "bubblewrap is installed but cannot make a sandbox here (a container forbidding namespaces?)",
                fix: "run Folio where unprivileged user namespaces are allowed")
        }
    }

    /// The tools that read documents' text and make thumbnails, and the MIME database.
    mutating func checkTools() {
        let missing = [("pdftotext", "poppler-utils"), ("unzip", "unzip"), ("prlimit", "util-linux")].filter { ExecutableSearch.locate($0.0, path: environment["PATH"]) == nil }
        if missing.isEmpty {
            add("text", .ok, "pdftotext, unzip and prlimit are there to read documents' text")
        } else {
            add("text", .warning, "missing: \(missing.map(\.0).joined(separator: ", ")) (documents needing them go without their text)",
                fix: "sudo apt-get install \(Set(missing.map(\.1)).sorted().joined(separator: " "))")
        }
        let thumbnailers = ThumbnailGenerator.installed(environment: environment)
        let pdftoppm = ExecutableSearch.locate("pdftoppm", path: environment["PATH"]) != nil
        if thumbnailers.isEmpty && !pdftoppm {
            add("thumbnails", .warning, "no thumbnailer installed: the browser shows icons only", fix: "sudo apt-get install libgdk-pixbuf2.0-bin poppler-utils")
        } else {
            add("thumbnails", .ok, "\(thumbnailers.count) thumbnailer\(thumbnailers.count == 1 ? "" : "s")\(pdftoppm ? " and pdftoppm" : "")")
        }
        let dataDirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share").split(separator: ":")
        if dataDirs.contains(where: { FileManager.default.fileExists(atPath: "\($0)/mime/mime.cache") }) {
            add("types", .ok, "shared-mime-info's database is installed")
        } else {
            add("types", .warning, "no shared-mime-info database: files are typed by Folio's own table only", fix: "sudo apt-get install shared-mime-info")
        }
    }

    /// The drive's server: reachable, the account right, writable (the setup's own check).
    mutating func checkDrive() async {
        let configuration: DriveConfiguration?
        do {
            configuration = try DriveConfiguration.load(paths)
        } catch {
            add("drive", .problem, "the drive's settings cannot be read: \(error.localizedDescription)", fix: "folio drive setup … again")
            return
        }
        guard let configuration else {
            add("drive", .ok, "no drive set up (folio drive setup webdav|s3|folder …)")
            return
        }
        do {
            let secret = try SecretBox.load(at: DriveConfiguration.secretPath(paths), paths: paths, environment: environment)
            try await configuration.check(secret: secret, paths)
            add("drive", .ok, "\(configuration): reachable, and Folio may write there")
        } catch {
            add("drive", .problem, "\(configuration): \(error.localizedDescription)", fix: "check the server, or set the drive up again: folio drive setup …")
        }
    }
}
