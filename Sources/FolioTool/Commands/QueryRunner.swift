import ArgumentParser
import Folio
import Foundation

/// Runs a metadata query for a command: the results once gathered, then (`live`) the changes.
struct QueryRunner {
    /// How results are printed.
    enum Output {
        /// A path a line (changes marked +, ~ or -).
        case paths
        /// Paths each ended by a NUL byte (`-0`), for `xargs -0`.
        case nul
        /// JSON lines.
        case json
        /// Only how many there are (live: after each change).
        case count
    }

    /// An order for the gathered results: paths best first, and the passages their text matched.
    struct Ranking {
        var order: [String: Int] = [:]
        var snippets: [String: String] = [:]

        /// From a `search` reply's items, best first.
        init(items: [WireValue]) {
            for (rank, item) in items.enumerated() {
                guard let path = item["p"]?.stringValue else { continue }
                order[path] = order[path] ?? rank
                if let snippet = item["snippet"]?.stringValue { snippets[path] = snippet }
            }
        }

        /// `items` with the ranked first, best first, then the rest in their order.
        func sorted(_ items: [MetadataItem]) -> [MetadataItem] {
            let keyed = items.enumerated().map { (offset, item) in
                (order[item.value(forAttribute: NSMetadataItemPathKey) as? String ?? ""] ?? Int.max, offset, item)
            }
            return keyed.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
        }
    }

    var command: String
    var output: Output
    var live: Bool
    var ranking: Ranking?

    func run(_ predicate: MetadataPredicate, scopes: [URL], sortedBy sorting: [MetadataSortDescriptor]) throws {
        let query = MetadataQuery()
        query.predicate = predicate
        query.searchScopes = scopes
        query.sortDescriptors = sorting
        query.notificationBatchingInterval = 0.2
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        query.operationQueue = queue
        let finished = DispatchSemaphore(value: 0)
        let printer = ResultPrinter(output: output, snippets: ranking?.snippets ?? [:])
        let ranking = ranking
        let observers = [
            NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidFinishGathering, object: query, queue: queue) { _ in
                if output == .count {
                    printer.count(query.resultCount)
                } else {
                    let items = query.results.compactMap { $0 as? MetadataItem }
                    for item in ranking?.sorted(items) ?? items { printer.print(item, change: nil) }
                }
                finished.signal()
            },
            NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidUpdate, object: query, queue: queue) { note in
                if output == .count {
                    printer.count(query.resultCount)
                    return
                }
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
            printError("\(command): the query did not start (check the scopes)")
            throw ExitCode.failure
        }
        finished.wait()
        if live {
            printError("\(command): watching for changes (interrupt to stop)")
            // Not `dispatchMain()`: on Linux its exit of the main thread upsets libdispatch's
            // worker threads once they retire (SIGILL in the thread-specific data cleanup).
            while true { pause() }
        }
        query.stop()
    }
}

/// Prints results: the path (with +, ~ or - for live changes), NUL-ended paths, JSON lines, or
/// the count.
private final class ResultPrinter: @unchecked Sendable {
    let output: QueryRunner.Output
    let snippets: [String: String]

    init(output: QueryRunner.Output, snippets: [String: String]) {
        self.output = output
        self.snippets = snippets
    }

    func count(_ count: Int) {
        Swift.print(count)
        fflush(nil)
    }

    func print(_ item: MetadataItem, change: String?) {
        let path = item.value(forAttribute: NSMetadataItemPathKey) as? String ?? "?"
        if output == .nul {
            // Removed items are not printed: a NUL-separated list feeds other commands.
            if change != "removed" { FileHandle.standardOutput.write(Data((path + "\0").utf8)) }
        } else if output == .json {
            var object: [String: WireValue] = [
                "path": .string(path), "name": .string(item.value(forAttribute: NSMetadataItemFSNameKey) as? String ?? ""),
                "size": .int(Int64(item.value(forAttribute: NSMetadataItemFSSizeKey) as? Int ?? 0)),
                "contentType": .string(item.value(forAttribute: NSMetadataItemContentTypeKey) as? String ?? ""),
                "modified": .double((item.value(forAttribute: NSMetadataItemFSContentChangeDateKey) as? Date)?.timeIntervalSince1970 ?? 0),
            ]
            if let change { object["change"] = .string(change) }
            if let snippet = snippets[path] { object["snippet"] = .string(snippet) }
            Swift.print(String(decoding: WireValue.object(object).serialized(), as: UTF8.self))
        } else {
            let mark = change.map { ["added": "+ ", "changed": "~ ", "removed": "- "][$0] ?? "" } ?? ""
            Swift.print(mark + path)
        }
        fflush(nil)
    }
}
