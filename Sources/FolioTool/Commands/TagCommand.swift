import ArgumentParser
import Folio
import Foundation

/// `folio tag add|remove|list`: the user's tags on files (`user.xdg.tags`, as KDE keeps them).
struct TagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag", abstract: "Add, remove and list tags on files (user.xdg.tags; queried as kMDItemUserTags).",
        subcommands: [Add.self, Remove.self, List.self])

    /// `folio tag add <tag> <file>…`.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Tag files.")
        @Argument(help: "The tag.") var tag: String
        @Argument(help: "The files.") var files: [String]

        func run() throws {
            try TagCommand.change(files) { $0.contains(tag) ? $0 : $0 + [tag] }
        }
    }

    /// `folio tag remove <tag> <file>…`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a tag from files.")
        @Argument(help: "The tag.") var tag: String
        @Argument(help: "The files.") var files: [String]

        func run() throws {
            try TagCommand.change(files) { $0.filter { $0 != tag } }
        }
    }

    /// `folio tag list <file>…`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Print each file's tags.")
        @Argument(help: "The files.") var files: [String]

        func run() {
            for file in files { print("\(file)\t\(FileTags.tags(of: URL(fileURLWithPath: file)).joined(separator: ", "))") }
        }
    }

    static func change(_ files: [String], _ edit: ([String]) -> [String]) throws {
        var failed = false
        for file in files {
            let url = URL(fileURLWithPath: file)
            do { try FileTags.setTags(edit(FileTags.tags(of: url)), of: url) } catch {
                printError("folio tag: \(file): \(error.localizedDescription)")
                failed = true
            }
        }
        if failed { throw ExitCode.failure }
    }
}
