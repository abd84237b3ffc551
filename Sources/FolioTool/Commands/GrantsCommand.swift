import ArgumentParser
import Folio
import Foundation

/// `folio grants`: which app may reach which document outside its container, and taking it back.
struct GrantsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grants", abstract: "List, add and revoke apps' grants to documents outside their containers.",
        subcommands: [List.self, Add.self, Revoke.self])

    /// `folio grants list [--app ID]`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List grants, with where each document is now.")
        @Option(help: "Only this app's grants.") var app: String?
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let reply = try withDaemon("grants") { daemon in
                try daemon.send(GrantList(app: app))
            }
            let grants = reply["grants"]?.arrayValue ?? []
            if json {
                print(String(decoding: WireValue.array(grants).serialized(), as: UTF8.self))
                return
            }
            if grants.isEmpty {
                print("no grants")
                return
            }
            printTable(
                ["GRANT", "APP", "ACCESS", "LIFETIME", "FROM", "KIND", "ITEM"],
                grants.map { grant in
                    [
                        "\(grant["grant"]?.intValue ?? 0)", grant["app"]?.stringValue ?? "?", grant["access"]?.stringValue ?? "?",
                        grant["lifetime"]?.stringValue ?? "?", grant["source"]?.stringValue ?? "?",
                        grant["folder"]?.boolValue == true ? "folder" : "document", grant["displayPath"]?.stringValue ?? "?",
                    ]
                })
        }
    }

    /// `folio grants add --app ID <path> [--write] [--session]`.
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Grant an app a document or folder (as if the user picked it).")
        @Option(help: "The app.") var app: String
        @Argument(help: "The document or folder.") var path: String
        @Flag(help: "Allow writing, not only reading.") var write = false
        @Flag(help: "Only until the daemon restarts.") var session = false

        func run() throws {
            let full = URL(fileURLWithPath: path).standardizedFileURL.path
            let reply = try withDaemon("grants") { daemon in
                try daemon.send(GrantAdd(app: app, path: full, write: write, persistent: !session))
            }
            print("grant \(reply["grant"]?.intValue ?? 0): \(app) may \(write ? "read and write" : "read") \(reply["displayPath"]?.stringValue ?? full)")
        }
    }

    /// `folio grants revoke <number> | --app ID [path]`.
    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke grants, at once: by number, or an app's (to one path, or all).")
        @Argument(help: "The grant's number (from `folio grants list`), or the path with --app.") var target: String?
        @Option(help: "The app whose grants to revoke.") var app: String?

        func validate() throws {
            if app == nil && (target == nil || Int64(target!) == nil) {
                throw ValidationError("give a grant number, or --app (and a path)")
            }
        }

        func run() throws {
            var revoke = GrantRevoke()
            if let app {
                revoke.app = app
                revoke.path = target.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            } else if let target, let number = UInt64(target) {
                revoke.grant = number
            }
            let reply = try withDaemon("grants") { try $0.send(revoke) }
            let numbers = (reply["revoked"]?.arrayValue ?? []).compactMap(\.intValue).map(String.init)
            print("revoked grant\(numbers.count == 1 ? "" : "s") \(numbers.joined(separator: ", "))")
        }
    }
}
