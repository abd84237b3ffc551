import ArgumentParser
import Folio
import Foundation

/// `folio index`: what the daemon's metadata index holds, which folders it covers, rebuilding it.
struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index", abstract: "Show and change what the daemon's metadata index covers.",
        subcommands: [Status.self, Add.self, Remove.self, Exclude.self, Include.self, Rebuild.self])

    /// `folio index status [--json] [--wait]`.
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Items indexed, folders still to crawl, items to type by content, texts to read, roots, watches.")
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Wait until the crawl, the typing and the reading of texts are done (printing progress to stderr).") var wait = false

        func run() throws {
            let status = try withDaemon("index status") { daemon -> WireValue in
                var status = try daemon.send(IndexStatus())
                while wait, status["state"]?.stringValue != "idle" {
                    if status["state"]?.stringValue == "typing" {
                        printError("typing by content: \(status["pending_types"]?.intValue ?? 0) items to go")
                    } else if status["state"]?.stringValue == "extracting" {
                        printError("reading documents' text: \(status["pending_contents"]?.intValue ?? 0) to go")
                    } else {
                        printError("crawling: \(status["items"]?.intValue ?? 0) items, \(status["pending_folders"]?.intValue ?? 0) folders to go")
                    }
                    Thread.sleep(forTimeInterval: 0.5)
                    status = try daemon.send(IndexStatus())
                }
                return status
            }
            if json {
                print(String(decoding: status.serialized(), as: UTF8.self))
                return
            }
            print("state: \(status["state"]?.stringValue ?? "?")")
            print("items: \(status["items"]?.intValue ?? 0)")
            print("folders to crawl: \(status["pending_folders"]?.intValue ?? 0)")
            print("items to type by content: \(status["pending_types"]?.intValue ?? 0)")
            print("documents whose text is still to read: \(status["pending_contents"]?.intValue ?? 0)")
            print("folders watched: \(status["watched_folders"]?.intValue ?? 0)")
            print("live queries: \(status["queries"]?.intValue ?? 0)")
            for root in status["roots"]?.arrayValue ?? [] {
                print("root: \(root["path"]?.stringValue ?? "?") (\(root["origin"]?.stringValue ?? "?"), \(root["items"]?.intValue ?? 0) items)")
            }
            let left = ["everything": "not indexed", "contents": "what is in it not indexed (a marker file)", "text": "text not read"]
            for exclusion in status["exclusions"]?.arrayValue ?? [] {
                let kind = exclusion["kind"]?.stringValue ?? "?"
                print("excluded: \(exclusion["path"]?.stringValue ?? "?") (\(left[kind] ?? kind))")
            }
        }
    }

    /// `folio index add <folder>`.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Index a folder and everything in it from now on.")
        @Argument(help: "The folder.") var folder: String

        func run() throws {
            let path = URL(fileURLWithPath: folder).standardizedFileURL.path
            _ = try withDaemon("index add") { try $0.send(IndexAdd(path: path)) }
            print("indexing \(path)")
        }
    }

    /// `folio index remove <folder>`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Stop indexing a folder added with `folio index add`.")
        @Argument(help: "The folder.") var folder: String

        func run() throws {
            let path = URL(fileURLWithPath: folder).standardizedFileURL.path
            _ = try withDaemon("index remove") { try $0.send(IndexRemove(path: path)) }
            print("no longer indexing \(path)")
        }
    }

    /// `folio index rebuild`.
    struct Rebuild: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rebuild", abstract: "Forget the index and crawl every root again.")

        func run() throws {
            _ = try withDaemon("index rebuild") { try $0.send(IndexRebuild()) }
            print("rebuilding the index (see `folio index status`)")
        }
    }
}

/// `folio search <text>`: names containing the text, across everything indexed; with `--content`,
/// the documents whose text holds its words too, each with the passage that matched.
struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search", abstract: "Find items whose name contains the text (case and accents aside), across everything indexed.")
    @Argument(help: "Part of a name (with --content, words of the text too).") var text: String
    @Option(help: "At most this many results.") var limit = 50
    @Flag(name: [.short, .long], help: "Search the documents' text as well: words beginning with each word given, best first.")
    var content = false
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let reply = try withDaemon("search") { try $0.send(Search(text: text, limit: limit, content: content ? true : nil)) }
        let items = reply["items"]?.arrayValue ?? []
        if items.isEmpty && !json { printError("nothing found") }
        for line in SearchListing.lines(items, json: json, marks: SearchListing.marks(terminal: isatty(STDOUT_FILENO) == 1)) { print(line) }
    }
}

/// `folio recents`: what was opened, created or modified lately, from Folio and GTK's recents.
struct RecentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recents", abstract: "List recently opened, created and modified documents, newest first.")
    @Option(help: "At most this many.") var limit = 20
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let reply = try withDaemon("recents") { try $0.send(Recents(limit: limit)) }
        let items = reply["items"]?.arrayValue ?? []
        if json {
            print(String(decoding: WireValue.array(items).serialized(), as: UTF8.self))
            return
        }
        let formatter = ISO8601DateFormatter()
        for item in items {
            let date = formatter.string(from: Date(timeIntervalSince1970: item["used"].flatMap(Self.seconds) ?? 0))
            let who = item["app"]?.stringValue ?? item["source"]?.stringValue ?? ""
            print("\(date)\t\(item["event"]?.stringValue ?? "?")\t\(who)\t\(item["path"]?.stringValue ?? "?")")
        }
    }

    private static func seconds(_ value: WireValue) -> Double? {
        switch value {
        case .int(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }
}

/// `folio favorites list|add|remove`: the favorite folders the browser shows.
struct FavoritesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "favorites", abstract: "List, add and remove favorite folders.", subcommands: [List.self, Add.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The favorites, first first.")
        func run() throws {
            let reply = try withDaemon("favorites") { try $0.send(Favorites()) }
            for item in reply["items"]?.arrayValue ?? [] { print(item["path"]?.stringValue ?? "?") }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add folders at the top, in the order given.")
        @Argument(help: "The folders.") var folders: [String]
        func validate() throws {
            if folders.isEmpty { throw ValidationError("name at least one folder") }
        }
        func run() throws {
            // Each is added at the top: the last first, so that the first named ends up first.
            let paths = folders.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            _ = try withDaemon("favorites add") { daemon in
                for path in paths.reversed() { _ = try daemon.send(FavoritesAdd(path: path)) }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove favorites.")
        @Argument(help: "The folders.") var folders: [String]
        func validate() throws {
            if folders.isEmpty { throw ValidationError("name at least one folder") }
        }
        func run() throws {
            let paths = folders.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            _ = try withDaemon("favorites remove") { daemon in
                for path in paths { _ = try daemon.send(FavoritesRemove(path: path)) }
            }
        }
    }
}
