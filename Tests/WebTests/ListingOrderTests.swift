import Folio
import FolioServers
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The page lists names as Finder does: case and accents aside, numbers by value (“Chapter 2”
/// before “Chapter 10”), folders first; the same whether the listing comes from the index (sorted
/// in SQLite) or from disk (sorted in memory).
@Suite("The page: names in natural order", .serialized, .elasticPool)
struct ListingOrderTests {
    static let names = ["Chapter 10.txt", "chapter 2.txt", "Chapter 1.txt", "Chapter 002b.txt", "Écrit 3.txt", "ecrit 20.txt", "a.txt", "Zed 9"]
    /// Folders first (“Zed 9”), then the files with numbers by value.
    static let expected = ["Zed 9", "a.txt", "Chapter 1.txt", "chapter 2.txt", "Chapter 002b.txt", "Chapter 10.txt", "Écrit 3.txt", "ecrit 20.txt"]

    func listing(_ rig: BrowserRig, _ folder: String, _ query: String = "") throws -> [String] {
        let path = folder.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let response = try LoopbackHTTP.request(
            port: rig.port, method: "GET", path: "/api/list?path=" + path + query, headers: ["Cookie": "folio-\(rig.port)=\(rig.token)"])
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let items = (try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["items"] as? [[String: Any]] ?? []
        return items.compactMap { $0["name"] as? String }
    }

    @Test func fromDiskAndFromTheIndex() async throws {
        let rig = try BrowserRig("order") { home in
            for folder in ["Documents", "Unindexed"] {
                try FileManager.default.createDirectory(atPath: home + "/" + folder, withIntermediateDirectories: true)
                for name in Self.names {
                    let path = home + "/" + folder + "/" + name
                    if name.hasSuffix(".txt") {
                        try Data("x".utf8).write(to: URL(fileURLWithPath: path))
                    } else {
                        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                    }
                }
            }
        }
        defer { Task { await rig.stop() } }
        let documents = rig.home + "/Documents"
        try rig.folio(["index", "add", documents])
        let status = try rig.folio(["index", "status", "--wait"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try listing(rig, documents) == Self.expected)
        #expect(try listing(rig, rig.home + "/Unindexed") == Self.expected)
        // Descending: folders still first, then the files in reverse.
        let reversed = [Self.expected[0]] + Self.expected.dropFirst().reversed()
        #expect(try listing(rig, documents, "&desc=1") == reversed)
        #expect(try listing(rig, rig.home + "/Unindexed", "&desc=1") == reversed)
        // A page from the middle, from SQLite.
        #expect(try listing(rig, documents, "&offset=2&limit=3") == Array(Self.expected[2..<5]))
    }
}
