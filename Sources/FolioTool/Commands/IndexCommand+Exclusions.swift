import ArgumentParser
import Folio
import Foundation

extension IndexCommand {
    /// `folio index exclude <folder> [--text]`.
    struct Exclude: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "exclude", abstract: "Leave a folder out of the index: everything in it, or with --text only its documents' text.",
            discussion: """
                Folders holding a .nomedia, .trackerignore or .metadata_never_index file are left out by themselves (what is in them; \
                the folder itself is indexed). Hidden files and folders are indexed by name, their text never read.
                """)
        @Argument(help: "The folder.") var folder: String
        @Flag(help: "Index the names of what is in the folder, not its documents' text.") var text = false

        func run() throws {
            let path = URL(fileURLWithPath: folder).standardizedFileURL.path
            _ = try withDaemon("index exclude") { try $0.send(IndexExclude(path: path, text: text ? true : nil)) }
            print(text ? "no longer reading the text of documents in \(path)" : "no longer indexing \(path)")
        }
    }

    /// `folio index include <folder>`.
    struct Include: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "include", abstract: "Index a folder excluded with `folio index exclude` again.")
        @Argument(help: "The folder.") var folder: String

        func run() throws {
            let path = URL(fileURLWithPath: folder).standardizedFileURL.path
            _ = try withDaemon("index include") { try $0.send(IndexInclude(path: path)) }
            print("indexing \(path) again")
        }
    }
}
