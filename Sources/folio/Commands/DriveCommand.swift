import ArgumentParser
import Folio
import FolioDaemon
import FolioProviders
import FolioSystem
import Foundation

/// `folio drive setup|sync|status|repair`: the user's synced drive.
struct DriveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drive", abstract: "Set up and sync the user's drive (iCloud Drive for Linux).",
        subcommands: [Setup.self, Sync.self, Status.self, Repair.self])

    /// `folio drive setup webdav URL | s3 ENDPOINT BUCKET[/PREFIX] | folder PATH`.
    struct Setup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put the drive on a WebDAV server, an S3 bucket or a folder.",
            discussion: """
                The secret (a WebDAV password or an S3 secret key) comes from $FOLIO_PASSWORD, never the command \
                line; it is sealed in $XDG_CONFIG_HOME/folio/drive.secret (mode 0600) under a key of its own. \
                Setting up over a folder or a server that already holds files merges them: nothing is deleted, \
                equal files match, and different ones are both kept.
                """)

        @Argument(help: "webdav, s3 or folder.") var kind: String
        @Argument(help: "WebDAV: the collection URL. S3: the server URL. Folder: the folder.") var location: String
        @Argument(help: "S3: BUCKET or BUCKET/PREFIX.") var bucket: String?
        @Option(help: "The WebDAV user or S3 access key (default for S3: $AWS_ACCESS_KEY_ID).") var user: String?
        @Option(help: "The S3 region.") var region = "us-east-1"

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let secret = environment["FOLIO_PASSWORD"]
            let configuration: DriveConfiguration
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
            default:
                throw ValidationError("unknown drive kind “\(kind)” (webdav, s3 or folder)")
            }
            try configuration.save(secret: kind == "s3" ? secret ?? environment["AWS_SECRET_ACCESS_KEY"] : secret)
            print("drive: \(configuration)")
            print("replica: \(FolioPaths().driveDirectory)")
            print("run `folio drive sync` to sync it")
        }
    }

    /// `folio drive sync [--confirm-deletions]`: one pass.
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sync the drive once and report what changed.")
        @Flag(help: "Let deletions held by the mass-deletion guard go ahead.") var confirmDeletions = false

        func run() async throws {
            let drive = try DriveCommand.drive()
            let report: SyncReport
            do {
                report = try await drive.sync(confirmingDeletions: confirmDeletions)
            } catch let stop as SyncStop {
                printError("folio drive sync: \(stop)")
                throw ExitCode(3)
            } catch let error as FileProviderError {
                printError("folio drive sync: the server could not be reached or refused: \(error)")
                throw ExitCode(4)
            }
            var parts = ["uploaded \(report.uploaded)", "downloaded \(report.downloaded)", "deleted on the server \(report.deletedOnServer)",
                "deleted here \(report.deletedHere)"]
            if report.converged > 0 { parts.append("matched \(report.converged)") }
            if report.merged { parts.append("merged (nothing deleted)") }
            print(parts.joined(separator: ", "))
            for path in report.conflicts { print("conflict: \(path) (the server's version kept the name; this device's is a conflict version: folio versions list)") }
            if report.heldDeletions > 0 {
                print("held: \(report.heldDeletions) deletions wait for confirmation (folio drive sync --confirm-deletions)")
            }
            for (path, reason) in report.deferred.sorted(by: { $0.key < $1.key }) { print("deferred: \(path): \(reason)") }
            for name in report.skipped { print("skipped on the server: \(name)") }
            if !report.deferred.isEmpty { throw ExitCode(5) }
        }
    }

    /// `folio drive status`.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show where the drive lives.")
        func run() async throws {
            guard let configuration = try DriveConfiguration.load() else {
                print("no drive (folio drive setup webdav|s3|folder …)")
                return
            }
            print("drive: \(configuration)")
            print("replica: \(FolioPaths().driveDirectory)")
        }
    }

    /// `folio drive repair`.
    struct Repair: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the next sync a merge that deletes nothing (after a wiped, replaced or restored replica or server).")
        func run() async throws {
            try await DriveCommand.drive().repair()
            print("the next `folio drive sync` merges this device's files with the server's; nothing will be deleted")
        }
    }

    static func drive() throws -> DriveSync {
        guard let configuration = try DriveConfiguration.load() else {
            printError("folio drive: no drive is set up (folio drive setup webdav|s3|folder …)")
            throw ExitCode(2)
        }
        return try DriveSync(provider: configuration.makeProvider())
    }
}
