import ArgumentParser
import Folio
import Foundation

/// `folio versions list|show|restore|resolve <file>`: the versions Folio keeps of a document.
struct VersionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions",
        abstract: "List, show, restore and resolve the versions kept of a document.",
        subcommands: [List.self, Show.self, Restore.self, Resolve.self])

    /// `folio versions list <file>`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a document's versions, oldest first.")
        @Argument(help: "The document.") var file: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let url = URL(fileURLWithPath: file)
            let versions = try loadVersions(url)
            if json {
                let rows: [WireValue] = versions.map { version in
                    [
                        "id": .string(version.identifier), "kind": .string(version.kindName),
                        "modified": .double(version.modificationDate?.timeIntervalSince1970 ?? 0),
                        "conflict": .bool(version.isConflict), "resolved": .bool(version.isResolved),
                        "computer": .string(version.localizedNameOfSavingComputer ?? ""), "name": .string(version.localizedName ?? ""),
                        "path": .string(version.url.path),
                    ]
                }
                print(String(decoding: WireValue.object(["item": .string(url.path), "versions": .array(rows)]).serialized(), as: UTF8.self))
                return
            }
            if versions.isEmpty {
                print("no versions kept of \(file)")
                // Advice, not the listing: on standard error.
                printError(
                    "(versions are kept by Folio's documents and the drive: the contents an open document knew when another program replaced them, both sides of a conflict, a version an app adds; a file only other programs write has none)"
                )
                return
            }
            let formatter = ISO8601DateFormatter()
            for version in versions {
                var flags = version.kindName
                if version.isConflict { flags += version.isResolved ? ", resolved conflict" : ", UNRESOLVED CONFLICT" }
                let date = version.modificationDate.map { formatter.string(from: $0) } ?? "?"
                print("\(version.identifier)  \(date)  \(version.localizedName ?? "?") from \(version.localizedNameOfSavingComputer ?? "?")  (\(flags))")
            }
        }
    }

    /// `folio versions show <file> <id>`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a version's contents.")
        @Argument(help: "The document.") var file: String
        @Argument(help: "The version's identifier (from `list`).") var id: String

        func run() throws {
            let version = try find(URL(fileURLWithPath: file), id)
            guard let data = FileManager.default.contents(atPath: version.url.path) else {
                throw failure("the contents of version \(id) are missing from the store")
            }
            FileHandle.standardOutput.write(data)
        }
    }

    /// `folio versions restore <file> <id>`.
    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Put a version's contents back in place (the current contents are kept as a version first).")
        @Argument(help: "The document.") var file: String
        @Argument(help: "The version's identifier (from `list`).") var id: String

        func run() throws {
            let url = URL(fileURLWithPath: file)
            let version = try find(url, id)
            try coordinatedWrite(url) { url in
                _ = try FileVersion.addOfItem(at: url, withContentsOf: url)
                try version.replaceItem(at: url)
            }
            print("restored \(file) to version \(id)")
        }
    }

    /// `folio versions resolve <file>`.
    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "Mark a document's conflicts resolved, optionally keeping one version's contents.")
        @Argument(help: "The document.") var file: String
        @Option(help: "Put this version's contents in place first (the current contents are kept as a version).")
        var keep: String?
        @Flag(help: "Remove every other version afterwards, as Apple's resolution flow does.")
        var removeOthers = false

        func run() throws {
            let url = URL(fileURLWithPath: file)
            let winner = try keep.map { try find(url, $0) }
            var resolved = 0
            try coordinatedWrite(url) { url in
                if let winner {
                    _ = try FileVersion.addOfItem(at: url, withContentsOf: url)
                    try winner.replaceItem(at: url)
                }
                for version in FileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [] {
                    version.isResolved = true
                    resolved += 1
                }
                if removeOthers { try FileVersion.removeOtherVersionsOfItem(at: url) }
            }
            print("resolved \(resolved) conflict version(s) of \(file)")
        }
    }
}

private func failure(_ text: String) -> some Error {
    printError("folio versions: \(text)")
    return ExitCode.failure
}

private func loadVersions(_ url: URL) throws -> [FileVersion] {
    guard FileManager.default.fileExists(atPath: url.path) else { throw failure("no file \(url.path)") }
    do { return try FileVersion.versions(ofItemAt: url) } catch { throw failure("\(error.localizedDescription)") }
}

private func find(_ url: URL, _ id: String) throws -> FileVersion {
    guard let version = try loadVersions(url).first(where: { $0.identifier == id }) else {
        throw failure("no version \(id) of \(url.path); `folio versions list` shows them")
    }
    return version
}

/// Runs `body` in a coordinated write of `url`, reporting failures.
private func coordinatedWrite(_ url: URL, _ body: (URL) throws -> Void) throws {
    var coordinationError: NSError?
    var bodyError: (any Error)?
    FileCoordinator().coordinate(writingItemAt: url, options: [], error: &coordinationError) { url in
        do { try body(url) } catch { bodyError = error }
    }
    if let error = bodyError ?? coordinationError { throw failure(error.localizedDescription) }
}
