import ArgumentParser
import Folio
import FolioDaemon
import FolioSync
import FolioSystem
import Foundation

/// `folio drive setup|sync|status|download|evict|pin|unpin|publish|repair`: the user's synced drive.
struct DriveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drive", abstract: "Set up and sync the user's drive (iCloud Drive for Linux).",
        subcommands: [Setup.self, Path.self, Sync.self, Status.self, Download.self, Evict.self, Pin.self, Unpin.self, Publish.self, Repair.self])

    /// `folio drive setup webdav URL | s3 ENDPOINT BUCKET[/PREFIX] | folder PATH | provider EXECUTABLE [-- ARGUMENTS…]`.
    struct Setup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "setup",
            abstract: "Put the drive on a WebDAV server, an S3 bucket, a folder, or an out-of-process provider.",
            discussion: """
                The secret (a WebDAV password or an S3 secret key) comes from $FOLIO_PASSWORD, never the command \
                line; it is sealed in $XDG_CONFIG_HOME/folio/drive.secret (mode 0600) under a key of its own. \
                Setting up over a folder or a server that already holds files merges them: nothing is deleted, \
                equal files match, and different ones are both kept. The server is checked first (its root \
                listed, a small file written and deleted); a refusal says why in one sentence and saves nothing.
                """)

        @Argument(help: "webdav, s3, folder or provider.") var kind: String
        @Argument(help: "WebDAV: the collection URL. S3: the server URL. Folder: the folder. Provider: the executable.") var location: String
        @Argument(help: "S3: BUCKET or BUCKET/PREFIX.") var bucket: String?
        @Argument(parsing: .postTerminator, help: "Provider: the executable's arguments, after --.") var providerArguments: [String] = []
        @Option(help: "The WebDAV user or S3 access key (default for S3: $AWS_ACCESS_KEY_ID).") var user: String?
        @Option(help: "The S3 region.") var region = "us-east-1"
        @Flag(help: "Save without checking the server first (it lists the root and writes and deletes a small file).") var noCheck = false
        @Option(
            help: """
                How files that are not downloaded appear: stubs (name.folio-cloud files) or on-demand (their own names, \
                in the drive's folder mounted with FUSE by the daemon; a program's first read downloads the file). \
                Default: on-demand where FUSE can mount here, stubs elsewhere.
                """) var files: DriveConfiguration.Files?

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            // Credentials in the URL go where the secret goes (sealed), never into drive.json.
            let (location, urlUser, urlPassword) = kind == "webdav" || kind == "s3"
                ? DriveConfiguration.splittingCredentials(from: self.location) : (self.location, nil, nil)
            if urlPassword != nil { printError("folio drive setup: the password in the URL is kept sealed, not in the configuration") }
            let user = user ?? urlUser
            let secret = environment["FOLIO_PASSWORD"] ?? urlPassword
            if let user, !user.isEmpty, secret == nil {
                printError("folio drive setup: --user \(user) without a password: set $FOLIO_PASSWORD (the server is asked without one)")
            }
            var configuration: DriveConfiguration
            switch kind {
            case "webdav":
                guard let url = URL(string: location), url.scheme == "http" || url.scheme == "https" else {
                    throw ValidationError("webdav needs an http(s) URL")
                }
                configuration = DriveConfiguration(kind: .webdav, url: location, user: user)
            case "s3":
                guard let url = URL(string: location), url.host != nil, let bucket else {
                    throw ValidationError("s3 needs the server URL and BUCKET[/PREFIX]: folio drive setup s3 https://s3.example.com bucket/drive")
                }
                let parts = bucket.split(separator: "/", maxSplits: 1).map(String.init)
                guard let key = user ?? environment["AWS_ACCESS_KEY_ID"], secret != nil || environment["AWS_SECRET_ACCESS_KEY"] != nil else {
                    throw ValidationError("s3 needs an access key (--user or $AWS_ACCESS_KEY_ID) and a secret ($FOLIO_PASSWORD or $AWS_SECRET_ACCESS_KEY)")
                }
                configuration = DriveConfiguration(kind: .s3, url: location, user: key, bucket: parts[0], prefix: parts.count > 1 ? parts[1] : nil, region: region)
            case "folder":
                let folder = URL(fileURLWithPath: location).standardizedFileURL.path
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                    throw ValidationError("\(location) is not a folder")
                }
                configuration = DriveConfiguration(kind: .folder, url: folder)
            case "provider":
                let executable = URL(fileURLWithPath: location).standardizedFileURL.path
                guard access(executable, X_OK) == 0 else { throw ValidationError("\(location) is not an executable") }
                configuration = DriveConfiguration(kind: .provider, url: executable, arguments: providerArguments)
            default:
                throw ValidationError("unknown drive kind “\(kind)” (webdav, s3, folder or provider)")
            }
            let refusal = DriveMountAvailability.refusal()
            if files == .onDemand, let refusal { throw ValidationError("--files on-demand: \(refusal)") }
            // Chosen for the machine when not asked for.
            let files = files ?? (refusal == nil ? .onDemand : .stubs)
            let chosen = self.files != nil ? "" : refusal.map { "; chosen: \($0)" } ?? "; chosen: FUSE mounts here (--files stubs for stub files)"
            configuration.files = files
            let sealed = kind == "s3" ? secret ?? environment["AWS_SECRET_ACCESS_KEY"] : secret
            if !noCheck {
                do {
                    try await configuration.check(secret: sealed)
                } catch {
                    printError("folio drive setup: \(error.localizedDescription); nothing was saved (--no-check saves it unchecked)")
                    throw ExitCode(4)
                }
            }
            let saved = configuration
            try await SyncFileWork.run { try saved.save(secret: sealed) }
            print("drive: \(configuration)")
            print("folder: \(FolioPaths().driveDirectory) (`folio drive path` prints it)")
            // A daemon that runs takes the new configuration now: with files on demand, the folder
            // is mounted when this returns.
            _ = try await DriveCommand.mountThroughDaemon(configuration)
            print("files: " + DriveCommand.filesLine(configuration) + chosen)
            print("run `folio drive sync` to sync it")
        }
    }

    /// `folio drive path`: the drive's folder, as people and programs see it.
    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "path",
            abstract: "Print the drive's folder: where its files are, for you and every program.",
            discussion: """
                With files on demand it is the folder the daemon mounts (each file under its own name); with \
                stubs, the folder holding downloaded files and name.folio-cloud stubs. Fails (exit status 2) \
                when no drive is set up.
                """)

        func run() throws {
            _ = try DriveCommand.driveConfiguration()
            print(FolioPaths().driveDirectory)
        }
    }

    /// `folio drive sync [--confirm-deletions]`: one pass, which the daemon runs when one runs.
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Sync the drive once and report what changed.",
            discussion: "With a daemon running, the daemon runs the pass (after one of its own under way); without one, this command does.")
        @Flag(help: "Let deletions held by the mass-deletion guard go ahead.") var confirmDeletions = false

        /// How long the command waits for the daemon's pass, which takes as long as its transfers
        /// (each bounded by the provider's own deadlines). Past it, the pass goes on in the daemon.
        static let daemonDeadline = Duration.seconds(24 * 60 * 60)

        func run() async throws {
            let configuration = try DriveCommand.driveConfiguration()
            let report: SyncReport
            do {
                if let ranByDaemon = try await Self.passInDaemon(confirmingDeletions: confirmDeletions) {
                    report = ranByDaemon
                } else {
                    let drive = try await DriveCommand.drive(configuration)
                    report = try await DriveProgressBar.showing("syncing", source: { DriveCommand.passes(drive) }) {
                        try await drive.sync(confirmingDeletions: confirmDeletions, retryingSetAside: true)
                    }
                }
            } catch let stop as SyncStop {
                printError("folio drive sync: \(stop)")
                throw ExitCode(3)
            } catch let error as FileProviderError {
                printError("folio drive sync: \(error.message ?? "the server refused: \(error)")")
                throw ExitCode(4)
            } catch let failure as CoordinationFailure where failure.domain == DriveSyncWire.stopDomain {
                printError("folio drive sync: \(failure.message)")
                throw ExitCode(3)
            } catch let failure as CoordinationFailure where failure.domain == FileProviderError.errorDomain {
                printError("folio drive sync: the server could not be reached or refused: \(failure.message)")
                throw ExitCode(4)
            } catch let failure as CoordinationFailure {
                printError("folio drive sync: the daemon's pass failed: \(failure.message)")
                throw ExitCode.failure
            }
            var parts = ["uploaded \(report.uploaded)", "downloaded \(report.downloaded)", "deleted on the server \(report.deletedOnServer)",
                "deleted here \(report.deletedHere)"]
            if report.placeholders > 0 { parts.append("placeholders \(report.placeholders) (in the cloud: folio drive download)") }
            if report.converged > 0 { parts.append("matched \(report.converged)") }
            if report.merged { parts.append("merged: a first sync (or one after a repair or a restored server) joins both sides' files and deletes nothing") }
            print(parts.joined(separator: ", "))
            for path in report.conflicts { print("conflict: \(path) (the server's version kept the name; this device's is a conflict version: folio versions list)") }
            if report.heldDeletions > 0 {
                print("held: \(report.heldDeletions) deletions wait for confirmation (folio drive sync --confirm-deletions)")
            }
            for (path, reason) in report.deferred.sorted(by: { $0.key < $1.key }) { print("deferred: \(path): \(reason)") }
            for (path, reason) in report.setAside.sorted(by: { $0.key < $1.key }) { print("set aside: \(path): \(reason)") }
            for name in report.skipped { print("skipped on the server: \(name)") }
            if !report.deferred.isEmpty || !report.setAside.isEmpty { throw ExitCode(5) }
        }

        /// The report of a pass the daemon ran (`drive.sync`), or nil when no daemon runs the
        /// drive: none answers, or the one that does has no drive service or predates the request.
        static func passInDaemon(confirmingDeletions: Bool) async throws(CoordinationFailure) -> SyncReport? {
            guard let daemon = try? DaemonCoordinationEngine(socketPath: FolioPaths().socketPath) else { return nil }
            defer { daemon.disconnect() }
            let result: WireValue
            do throws(CoordinationFailure) {
                let request = DriveSyncRequest(confirmDeletions: confirmingDeletions)
                result = try await DriveProgressBar.showing("syncing", source: DriveProgressBar.daemon(daemon)) { () async throws(CoordinationFailure) in
                    try await daemon.send(request, deadline: .after(daemonDeadline))
                }
            } catch {
                if error.kind == .unknownMethod || error.kind == .notFound { return nil }
                throw error
            }
            return try DriveSyncWire.report(from: result)
        }
    }

    /// The passes of the drive of this process, for its bar.
    static func passes(_ drive: DriveSync) -> (running: DriveProgressReply.Pass?, last: DriveProgressReply.Pass?) {
        let progress = drive.progress
        return (progress.pass.map(DriveProgressReply.Pass.init), progress.last.map(DriveProgressReply.Pass.init))
    }

    /// `folio drive status [PATH…]`.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show where the drive lives and where its items stand.",
            discussion: """
                Without paths: the drive, its replica and how many files are local, in the cloud (placeholders), \
                waiting to upload, or in error. With paths: one line per item at or below each: cloud, local, \
                uploading (the server does not have this content yet) or folder, then "pinned" when kept \
                downloaded, then the last error.
                """)
        @Argument(help: "Files or folders in the drive.") var paths: [String] = []

        func run() async throws {
            guard let configuration = try DriveConfiguration.load() else {
                print("no drive (folio drive setup webdav|s3|folder …)")
                return
            }
            // A daemon that runs but has not mounted the folder yet (set up a moment ago) mounts it now.
            _ = try await DriveCommand.mountThroughDaemon(configuration)
            let drive = try await DriveCommand.drive(configuration)
            if paths.isEmpty {
                print("drive: \(configuration)")
                print("folder: \(FolioPaths().driveDirectory)")
                print("files: " + DriveCommand.filesLine(configuration))
                if FileManager.default.fileExists(atPath: DriveConfiguration.secretPath(FolioPaths())) {
                    switch try await SyncFileWork.run({ SecretBox.keyPlace() }) {
                    case .keyring: print("secret: sealed; its key is in the session keyring")
                    case .file(let path): print("secret: sealed; its key is in \(path) (no session keyring reached: a copy of Folio's folders holds both)")
                    case .none: print("secret: sealed under a key that is in neither the session keyring nor \(SecretBox.keyPath())")
                    }
                }
                let items = try await drive.status([""])
                var counts: [DriveItemStatus.State: Int] = [:]
                for (_, item) in items { counts[item.state, default: 0] += 1 }
                print("files: \(counts[.local] ?? 0) local, \(counts[.cloud] ?? 0) in the cloud, \(counts[.uploading] ?? 0) waiting to upload")
                let leftovers = try await drive.stagingLeftovers()
                if leftovers.files > 0 {
                    print("staging: \(leftovers.files) files (\(leftovers.bytes) bytes) left by interrupted transfers; the next pass removes them")
                } else {
                    print("staging: empty")
                }
                let errors = items.filter { $0.1.error != nil }
                if !errors.isEmpty { print("errors: \(errors.count) (folio drive status PATH shows them)") }
                return
            }
            for (path, item) in try await drive.status(paths.map(drive.drivePath)) {
                var line = "\(item.state.rawValue)\t\(path)"
                if item.pinned { line += "\tpinned" }
                if let error = item.error { line += "\terror: \(error)" }
                print(line)
            }
        }
    }

    /// `folio drive download PATH…`.
    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "download",
            abstract: "Download placeholders (files, or everything below folders) so their content is local.",
            discussion: "Progress goes to standard error: a bar on a terminal, a line each tenth otherwise. Interrupted, what was not downloaded stays a placeholder.")
        @Argument(help: "Files or folders in the drive.") var paths: [String]

        func run() async throws {
            let done: [String]
            do {
                if let downloaded = try await Self.inDaemon(paths) {
                    done = downloaded
                } else {
                    let drive = try await DriveCommand.drive()
                    let targets = try paths.map(drive.drivePath)
                    done = try await DriveProgressBar.showing("downloading", offTerminal: true, source: { DriveCommand.passes(drive) }) {
                        try await drive.download(targets, progress: Progress(totalUnitCount: 0))
                    }
                }
            } catch let error as FileProviderError {
                printError("folio drive download: \(error)")
                throw ExitCode(4)
            } catch let failure as CoordinationFailure {
                printError("folio drive download: \(failure.message)")
                throw ExitCode(4)
            }
            for path in done { print("downloaded: \(path)") }
            if done.isEmpty { print("nothing to download: everything asked for is local") }
        }

        /// The downloads of `paths`, run by the daemon when one runs the drive (its index and
        /// presenters see them as they go; with files on demand, only it reaches the replica
        /// beneath the mount); nil otherwise.
        static func inDaemon(_ paths: [String]) async throws(CoordinationFailure) -> [String]? {
            guard let daemon = try? DaemonCoordinationEngine(socketPath: FolioPaths().socketPath) else { return nil }
            defer { daemon.disconnect() }
            let request = DriveDownloadRequest(paths: paths.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
            do throws(CoordinationFailure) {
                return try await DriveProgressBar.showing("downloading", offTerminal: true, source: DriveProgressBar.daemon(daemon)) {
                    () async throws(CoordinationFailure) in
                    try await daemon.send(request, deadline: .after(Sync.daemonDeadline)).downloaded
                }
            } catch {
                if error.kind == .unknownMethod || error.kind == .notFound { return nil }
                throw error
            }
        }
    }

    /// `folio drive evict PATH…`.
    struct Evict: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "evict",
            abstract: "Free space: make downloaded files placeholders again (their content stays on the server).",
            discussion: "Refused for pinned files and for files with changes the server does not have yet.")
        @Argument(help: "Files or folders in the drive.") var paths: [String]

        func run() async throws {
            // Through the daemon when one runs: apps presenting the files are asked first.
            if let daemon = try? DaemonCoordinationEngine(socketPath: FolioPaths().socketPath) {
                defer { daemon.disconnect() }
                var failed = false
                for path in paths {
                    do throws(CoordinationFailure) {
                        let reply = try await daemon.send(DriveEvictRequest(path: URL(fileURLWithPath: path).standardizedFileURL.path), deadline: .after(Sync.daemonDeadline))
                        for evicted in reply.evicted { print("evicted: \(evicted)") }
                    } catch {
                        printError("not evicted: \(path): \(error.message)")
                        failed = true
                    }
                }
                if failed { throw ExitCode(6) }
                return
            }
            let drive = try await DriveCommand.drive()
            let (evicted, refused) = try await drive.evict(paths.map(drive.drivePath))
            for path in evicted { print("evicted: \(path)") }
            for (path, error) in refused { printError("not evicted: \(path): \(error)") }
            if !refused.isEmpty { throw ExitCode(6) }
        }
    }

    /// `folio drive pin PATH…`.
    struct Pin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin",
            abstract: "Keep files (or everything below folders) downloaded; their placeholders are downloaded now.")
        @Argument(help: "Files or folders in the drive.") var paths: [String]

        func run() async throws {
            let drive = try await DriveCommand.drive()
            let targets = try paths.map(drive.drivePath)
            try await drive.setPinned(targets, true)
            do {
                var downloaded = try await Download.inDaemon(paths)
                if downloaded == nil { downloaded = try await drive.download(targets, progress: Progress(totalUnitCount: 0)) }
                for path in downloaded ?? [] { print("downloaded: \(path)") }
            } catch let error as FileProviderError {
                printError("folio drive pin: pinned, but the download failed (the next sync tries again): \(error)")
                throw ExitCode(4)
            } catch let failure as CoordinationFailure {
                printError("folio drive pin: pinned, but the download failed (the next sync tries again): \(failure.message)")
                throw ExitCode(4)
            }
            for path in targets { print("pinned: \(path.isEmpty ? "the whole drive" : path)") }
        }
    }

    /// `folio drive unpin PATH…`.
    struct Unpin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "unpin", abstract: "Stop keeping files downloaded (they stay local until evicted).")
        @Argument(help: "Files or folders in the drive.") var paths: [String]

        func run() async throws {
            let drive = try await DriveCommand.drive()
            let targets = try paths.map(drive.drivePath)
            try await drive.setPinned(targets, false)
            for path in targets { print("unpinned: \(path.isEmpty ? "the whole drive" : path)") }
        }
    }

    /// `folio drive publish PATH [--expires SECONDS]`.
    struct Publish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Print a link anyone can download a drive file from, without the drive's credentials, until it expires.",
            discussion: """
                On an S3 drive the link is a presigned URL, valid for at most seven days (the default); a WebDAV \
                server cannot make such links. The file must be on the server as it is here (sync first).
                """)
        @Argument(help: "A file in the drive.") var path: String
        @Option(help: "How long the link works, in seconds (at most the provider's longest: seven days on S3).") var expires: Int?

        func validate() throws {
            if let expires, expires < 1 { throw ValidationError("--expires takes a number of seconds, at least 1") }
        }

        func run() async throws {
            let drive = try await DriveCommand.drive()
            let expiration = expires.map { Date() + TimeInterval($0) } ?? .distantFuture
            do {
                let (url, until) = try await drive.publishingURL(try drive.drivePath(path), expiration: expiration)
                print(url.absoluteString)
                printError("expires: \(ISO8601DateFormatter().string(from: until))")
            } catch let failure as CoordinationFailure {
                printError("folio drive publish: \(failure.message)")
                throw ExitCode(6)
            } catch let error as FileProviderError {
                printError("folio drive publish: \(error)")
                throw ExitCode(4)
            }
        }
    }

    /// `folio drive repair`.
    struct Repair: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "repair",
            abstract: "Make the next sync a merge that deletes nothing (after a wiped, replaced or restored replica or server).")
        func run() async throws {
            try await DriveCommand.drive().repair()
            print("the next `folio drive sync` merges this device's files with the server's; nothing will be deleted")
        }
    }

    /// The drive's configuration; the command fails (exit status 2) when none is set up.
    static func driveConfiguration() throws -> DriveConfiguration {
        guard let configuration = try DriveConfiguration.load() else {
            printError("folio drive: no drive is set up (folio drive setup webdav|s3|folder …)")
            throw ExitCode(2)
        }
        return configuration
    }

    /// The drive of `configuration` (by default the one set up), synced in this process. Made on
    /// the blocking pool: opening the secret may wait for the session keyring. While the daemon has
    /// the drive's folder mounted (files on demand), the replica is reached beneath the mount.
    static func drive(_ configuration: DriveConfiguration? = nil) async throws -> DriveSync {
        let configuration = try configuration ?? driveConfiguration()
        let replicaRoot = try await replicaBeneathMount(configuration)
        return try await SyncFileWork.run {
            try DriveSync(provider: configuration.makeProvider(replicaRoot: replicaRoot), paths: FolioPaths(), replicaRoot: replicaRoot)
        }
    }

    /// Where the replica is while the daemon has the drive's folder mounted; nil when it is not.
    /// A mount no daemon answers for is refused: the folder shows nothing of the replica.
    static func replicaBeneathMount(_ configuration: DriveConfiguration) async throws -> String? {
        let folder = FolioPaths().driveDirectory
        guard configuration.files == .onDemand, DriveMountAvailability.isMounted(at: folder) else { return nil }
        guard let daemon = try? DaemonCoordinationEngine(socketPath: FolioPaths().socketPath) else {
            printError("folio drive: \(folder) is mounted, but no daemon answers for it (folio daemon clears it when it starts)")
            throw ExitCode(5)
        }
        defer { daemon.disconnect() }
        do throws(CoordinationFailure) {
            if let path = try await daemon.send(DriveReplicaRequest(), deadline: .after(Sync.daemonDeadline)).path { return path }
        } catch {
            printError("folio drive: \(folder) is mounted, but the daemon did not say where its replica is: \(error.message)")
            throw ExitCode(5)
        }
        printError("folio drive: \(folder) is mounted, but not by the daemon that runs now")
        throw ExitCode(5)
    }
}

extension DriveConfiguration.Files: ExpressibleByArgument {}

extension DriveCommand {
    /// How the drive's files appear, for `folio drive setup` and `status`.
    static func filesLine(_ configuration: DriveConfiguration) -> String {
        guard configuration.files == .onDemand else { return "stubs (name.folio-cloud for files not downloaded)" }
        let folder = FolioPaths().driveDirectory
        if DriveMountAvailability.isMounted(at: folder) { return "on demand: the daemon has mounted \(folder)" }
        if DaemonLock.holder(paths: FolioPaths()) != nil {
            let why = DriveMountAvailability.refusal().map { ": \($0)" } ?? " (its log says why: \(FolioPaths().stateDirectory)/daemon.log)"
            return "on demand, but the daemon that runs could not mount \(folder)\(why)"
        }
        return "on demand, not mounted now: the daemon mounts the drive's folder while it runs (folio daemon --background)"
    }

    /// With files on demand and a daemon running, asks the daemon to take the configuration as it
    /// is now, which mounts the drive's folder if it is not mounted yet; true when the folder is
    /// mounted then. Nil when there is nothing to ask: stubs, already mounted, or no daemon.
    static func mountThroughDaemon(_ configuration: DriveConfiguration) async throws -> Bool? {
        let folder = FolioPaths().driveDirectory
        guard configuration.files == .onDemand, !DriveMountAvailability.isMounted(at: folder),
            let daemon = try? DaemonCoordinationEngine(socketPath: FolioPaths().socketPath)
        else { return nil }
        defer { daemon.disconnect() }
        do throws(CoordinationFailure) {
            return try await daemon.send(DriveReplicaRequest(), deadline: .after(.seconds(60))).path != nil
        } catch {
            if error.kind == .unknownMethod { return nil }
            printError("folio drive: the daemon could not take the drive's configuration: \(error.message)")
            throw ExitCode(5)
        }
    }
}
