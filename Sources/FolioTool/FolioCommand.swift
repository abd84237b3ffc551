import ArgumentParser
import FolioVersion
#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import Logging

/// The `folio` command: the daemon, the type system, apps and benchmarks.
@main
struct FolioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio",
        abstract: "Folio: Apple's document system for Linux.",
        version: FolioVersion.description,
        subcommands: [
            DaemonCommand.self, StatusCommand.self, DriveCommand.self, CoordinateCommand.self, VersionsCommand.self, BookmarkCommand.self, TypesCommand.self, AppCommand.self, GrantsCommand.self, QueryCommand.self, FindCommand.self, ExtractWorkerCommand.self, SearchCommand.self, RecentsCommand.self, FavoritesCommand.self, IndexCommand.self, TagCommand.self, ProviderCommand.self, PickCommand.self, OpenCommand.self, RunCommand.self, BrowseCommand.self, DoctorCommand.self, InstallCommand.self, UninstallCommand.self, PackageCommand.self,
            BenchCommand.self, BenchWorkerCommand.self,
        ]
    )

    /// Parses the command line, sends logs to standard error (standard output carries results), and runs.
    ///
    /// The level is `FOLIO_LOG_LEVEL` (trace, debug, info, notice, warning, error, critical); by default
    /// `info` for the daemon and `warning` for everything else.
    static func main() async {
        // A process started from a thread that blocks signals (a dispatch worker of the parent: Foundation's
        // Process does not reset the mask) would pass the block on to its own children, and then a
        // SIGTERM to the daemon or a worker never arrives. Start with nothing blocked.
        var nothing = sigset_t()
        sigemptyset(&nothing)
        sigprocmask(SIG_SETMASK, &nothing, nil)
        do {
            var command = try parseAsRoot()
            let level = ProcessInfo.processInfo.environment["FOLIO_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
                ?? (command is DaemonCommand ? .info : .warning)
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
