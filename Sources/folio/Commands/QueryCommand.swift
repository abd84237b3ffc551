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
        do { parsed = try MetadataPredicate(format: predicate) } catch {
            printError("folio query: \(error)")
            throw ExitCode(2)
        }
        let query = MetadataQuery()
        query.predicate = parsed
        query.searchScopes = (scopes.isEmpty ? [FileManager.default.currentDirectoryPath] : scopes).map {
            URL(fileURLWithPath: $0).standardizedFileURL
        }
        if let sort { query.sortDescriptors = [MetadataSortDescriptor(key: sort, ascending: !descending)] }
        query.notificationBatchingInterval = 0.2
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        query.operationQueue = queue
        let finished = DispatchSemaphore(value: 0)
        let printer = ResultPrinter(json: json)
        let observers = [
            NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidFinishGathering, object: query, queue: queue) { _ in
                for item in query.results.compactMap({ $0 as? MetadataItem }) { printer.print(item, change: nil) }
                finished.signal()
            },
            NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidUpdate, object: query, queue: queue) { note in
                for (key, change) in [
                    (NSMetadataQueryUpdateAddedItemsKey, "added"), (NSMetadataQueryUpdateChangedItemsKey, "changed"),
                    (NSMetadataQueryUpdateRemovedItemsKey, "removed"),
                ] {
                    for item in note.userInfo?[key] as? [MetadataItem] ?? [] { printer.print(item, change: change) }
                }
            },
        ]
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        guard query.start() else {
            printError("folio query: the query did not start (check the scopes)")
            throw ExitCode.failure
        }
        finished.wait()
        if live {
            printError("folio query: watching for changes (interrupt to stop)")
            // Not `dispatchMain()`: on Linux its exit of the main thread upsets libdispatch's
            // worker threads once they retire (SIGILL in the thread-specific data cleanup).
            while true { pause() }
        }
        query.stop()
    }
}

/// Prints results: the path (with +, ~ or - for live changes), or JSON lines.
private final class ResultPrinter: @unchecked Sendable {
    let json: Bool
    init(json: Bool) { self.json = json }

    func print(_ item: MetadataItem, change: String?) {
        let path = item.value(forAttribute: NSMetadataItemPathKey) as? String ?? "?"
        if json {
            var object: [String: WireValue] = [
                "path": .string(path), "name": .string(item.value(forAttribute: NSMetadataItemFSNameKey) as? String ?? ""),
                "size": .int(Int64(item.value(forAttribute: NSMetadataItemFSSizeKey) as? Int ?? 0)),
                "contentType": .string(item.value(forAttribute: NSMetadataItemContentTypeKey) as? String ?? ""),
                "modified": .double((item.value(forAttribute: NSMetadataItemFSContentChangeDateKey) as? Date)?.timeIntervalSince1970 ?? 0),
            ]
            if let change { object["change"] = .string(change) }
            Swift.print(String(decoding: WireValue.object(object).serialized(), as: UTF8.self))
        } else {
            let mark = change.map { ["added": "+ ", "changed": "~ ", "removed": "- "][$0] ?? "" } ?? ""
            Swift.print(mark + path)
        }
        fflush(nil)
    }
}
