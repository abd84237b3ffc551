import ArgumentParser
import Folio
import Foundation

/// `folio bookmark create|resolve`: bookmark data from the command line (base64), for scripts.
struct BookmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookmark", abstract: "Create and resolve bookmarks (base64 bookmark data).",
        subcommands: [Create.self, Resolve.self])

    /// `folio bookmark create <file>`.
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Print bookmark data for a file, base64.")
        @Argument(help: "The file or folder.") var file: String
        @Flag(help: "A read-only security scope.") var readOnly = false

        func run() throws {
            let options: URL.BookmarkCreationOptions = readOnly ? [.withSecurityScope, .securityScopeAllowOnlyReadAccess] : []
            do {
                let data = try URL(fileURLWithPath: file).bookmarkData(options: options, includingResourceValuesForKeys: [.nameKey, .fileSizeKey])
                print(data.base64EncodedString())
            } catch {
                printError("folio bookmark: \(error.localizedDescription)")
                throw ExitCode.failure
            }
        }
    }

    /// `folio bookmark resolve <base64>`.
    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "resolve", abstract: "Print where bookmark data points now, and whether it is stale.")
        @Argument(help: "Bookmark data, base64 (as `create` prints it).") var bookmark: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            guard let data = Data(base64Encoded: bookmark.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                printError("folio bookmark: that is not base64 bookmark data")
                throw ExitCode.failure
            }
            var stale = false
            let url: URL
            do {
                url = try URL(resolvingBookmarkData: data, options: .withoutImplicitStartAccessing, bookmarkDataIsStale: &stale)
            } catch {
                printError("folio bookmark: \(error.localizedDescription)")
                throw ExitCode.failure
            }
            if json {
                print(String(decoding: WireValue.object(["path": .string(url.path), "stale": .bool(stale)]).serialized(), as: UTF8.self))
            } else {
                print(url.path + (stale ? "  (stale: moved or renamed; make a new bookmark)" : ""))
            }
        }
    }
}
