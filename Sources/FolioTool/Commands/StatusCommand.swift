import ArgumentParser
import Folio
import Foundation

/// `folio status`: the daemon's lock table, waiters and presenters, for debugging stuck claims.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the daemon's coordination state: claims held and waiting, presenters, clients.")

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        let status = try withDaemon("status") { try $0.send(DaemonStatus()) }
        if json {
            print(String(decoding: status.serialized(), as: UTF8.self))
            return
        }
        let claims = status["claims"]?.arrayValue ?? []
        print("claims: \(claims.count)")
        for claim in claims {
            let owner = claim["owner"]
            let items = (claim["items"]?.arrayValue ?? []).map { item in
                "\(item["access"]?.stringValue ?? "?")(\(item["options"]?.intValue ?? 0)) \(item["path"]?.stringValue ?? "?")"
            }
            var line = "  #\(claim["claim"]?.intValue ?? 0) \(claim["state"]?.stringValue ?? "?")"
            line += " pid \(owner?["pid"]?.intValue ?? 0) (\(owner?["name"]?.stringValue ?? "?"))"
            line += " for \(claim["age_ms"]?.intValue ?? 0) ms: " + items.joined(separator: ", ")
            if let total = claim["items_total"]?.intValue { line += " … (\(total) items)" }
            print(line)
            for waiting in claim["awaiting"]?.arrayValue ?? [] {
                print(
                    "      waiting \(waiting["waiting_ms"]?.intValue ?? 0) ms for presenter \(waiting["presenter"]?.intValue ?? 0) of pid \(waiting["owner"]?["pid"]?.intValue ?? 0): \(waiting["message"]?.stringValue ?? "?")"
                )
            }
        }
        let presenters = status["presenters"]?.arrayValue ?? []
        print("presenters: \(presenters.count)")
        for presenter in presenters {
            let owner = presenter["owner"]
            print(
                "  \(presenter["presenter"]?.intValue ?? 0) pid \(owner?["pid"]?.intValue ?? 0) (\(owner?["name"]?.stringValue ?? "?")): \(presenter["path"]?.stringValue ?? "(no item yet)")"
            )
        }
        let clients = status["clients"]?.arrayValue ?? []
        print("clients: \(clients.count)")
        for client in clients {
            print("  pid \(client["pid"]?.intValue ?? 0) (\(client["name"]?.stringValue ?? "?"))")
        }
        if let omitted = status["omitted"]?.objectValue, !omitted.isEmpty {
            let counts = omitted.keys.sorted().map { "\(omitted[$0]?.intValue ?? 0) \($0)" }
            print("(too much to show at once; left out: \(counts.joined(separator: ", ")))")
        }
    }
}
