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
                "\(Self.access(item["access"]?.stringValue, options: item["options"]?.intValue ?? 0)) \(item["path"]?.stringValue ?? "?")"
            }
            // Each client numbers its own claims: the client's number makes them unique.
            var line = "  claim \(owner?["client"]?.intValue ?? 0).\(claim["claim"]?.intValue ?? 0) \(claim["state"]?.stringValue ?? "?")"
            line += " by pid \(owner?["pid"]?.intValue ?? 0) (\(owner?["name"]?.stringValue ?? "?"))"
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
                "  presenter \(presenter["presenter"]?.intValue ?? 0) of pid \(owner?["pid"]?.intValue ?? 0) (\(owner?["name"]?.stringValue ?? "?")): \(presenter["path"]?.stringValue ?? "(no item yet)")"
            )
        }
        if let opens = status["opens"]?.arrayValue, !opens.isEmpty {
            print("programs' opens waiting for coordinated writes: \(opens.count)")
            for open in opens {
                print("  pid \(open["pid"]?.intValue ?? 0) for \(open["waiting_ms"]?.intValue ?? 0) ms: \(open["path"]?.stringValue ?? "?")")
            }
        }
        let clients = status["clients"]?.arrayValue ?? []
        print("clients: \(clients.count)")
        for client in clients {
            let own = client["own"]?.boolValue == true ? ", the daemon's own coordinations" : ""
            print("  client \(client["client"]?.intValue ?? 0): pid \(client["pid"]?.intValue ?? 0) (\(client["name"]?.stringValue ?? "?")\(own))")
        }
        if let omitted = status["omitted"]?.objectValue, !omitted.isEmpty {
            let counts = omitted.keys.sorted().map { "\(omitted[$0]?.intValue ?? 0) \($0)" }
            print("(too much to show at once; left out: \(counts.joined(separator: ", ")))")
        }
    }

    /// A claim item's access as `folio coordinate` spells it: `read` or `write`, and its options
    /// by Apple's names (`write forDeleting`), none when there are none.
    static func access(_ access: String?, options: Int64) -> String {
        let names: [(Int64, String)] =
            access == "read"
            ? [(1, "withoutChanges"), (2, "resolvesSymbolicLink"), (4, "immediatelyAvailableMetadataOnly"), (8, "forUploading")]
            : [(1, "forDeleting"), (2, "forMoving"), (4, "forMerging"), (8, "forReplacing"), (16, "contentIndependentMetadataOnly")]
        let spelled = names.filter { options & $0.0 != 0 }.map(\.1)
        return ([access ?? "?"] + spelled).joined(separator: " ")
    }
}
