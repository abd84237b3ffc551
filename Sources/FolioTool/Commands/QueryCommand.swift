import ArgumentParser
import Folio
import Foundation

/// `folio query '<predicate>' [--scope …] [--live]`: a metadata query from the command line.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Find items matching a predicate in Apple's format syntax, e.g. \"kMDItemFSName LIKE[c] '*.pdf' AND kMDItemFSSize > 100000\".")

    @Argument(help: "The predicate (kMDItemFSName, kMDItemFSSize, kMDItemContentTypeTree, kMDItemFSContentChangeDate …).")
    var predicate: String
    @Option(name: .customLong("scope"), help: "A folder to search (repeatable; default: the current folder).") var scopes: [String] = []
    @Option(help: "Sort by this attribute.") var sort: String?
    @Flag(help: "Sort descending.") var descending = false
    @Flag(help: "Keep running and print changes as they happen.") var live = false
    @Flag(help: "Print JSON lines.") var json = false

    func run() throws {
        let parsed: MetadataPredicate
        do { parsed = try MetadataPredicate(parsing: predicate) } catch {
            printError("folio query: \(error)")
            throw ExitCode(2)
        }
        let scopes = (scopes.isEmpty ? [FileManager.default.currentDirectoryPath] : scopes).map { URL(fileURLWithPath: $0).standardizedFileURL }
        let sorting = sort.map { [MetadataSortDescriptor(key: $0, ascending: !descending)] } ?? []
        try QueryRunner(command: "folio query", output: json ? .json : .paths, live: live).run(parsed, scopes: scopes, sortedBy: sorting)
    }
}
