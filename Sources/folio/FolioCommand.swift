import ArgumentParser

/// The `folio` command: the daemon, the type system, apps and benchmarks.
@main
struct FolioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio",
        abstract: "Folio: Apple's document system for Linux.",
        subcommands: [
            DaemonCommand.self, StatusCommand.self, CoordinateCommand.self, VersionsCommand.self, BookmarkCommand.self, TypesCommand.self, AppCommand.self, GrantsCommand.self, QueryCommand.self, SearchCommand.self, RecentsCommand.self, FavoritesCommand.self, IndexCommand.self, TagCommand.self, ProviderCommand.self, PickCommand.self, OpenCommand.self, RunCommand.self,
            BenchCommand.self, BenchWorkerCommand.self,
        ]
    )
}
