@testable import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("What the index leaves out", .elasticPool)
struct IndexExclusionTests {
    /// A folder holding `.nomedia` is indexed, what is in it is not (until the marker goes);
    /// hidden files are indexed by name, their text never read; `folio index exclude` leaves a
    /// folder out whole (its rows go, files made in it later stay out) or, with `--text`, only its
    /// documents' text; `folio index status` lists the exclusions; `folio index include` brings
    /// them back.
    @Test func excludedFoldersMarkersAndHiddenFiles() async throws {
        let world = try await IndexWorld("index-exclude") { dir in
            try dir.write("docs/keep.txt", "alpha in the open")
            try dir.write("docs/.hidden/secret.txt", "alpha in a hidden folder")
            try dir.write("docs/.dotfile.txt", "alpha in a hidden file")
            try dir.write("docs/media/.nomedia", "")
            try dir.write("docs/media/song.txt", "alpha among the songs")
            try dir.write("docs/private/p.txt", "alpha kept private")
            try dir.write("docs/notext/n.txt", "alpha not to be read")
        }
        let docs = world.docs.path
        try await world.waitUntilIdle()
        func indexed() throws -> Set<String> {
            Set(try world.sql("SELECT path FROM items").compactMap { $0[0].hasPrefix(docs + "/") ? String($0[0].dropFirst(docs.count)) : nil })
        }
        func byText() throws -> Set<String> {
            let items = try world.send(Search(text: "alpha", content: true))["items"]?.arrayValue ?? []
            return Set(items.compactMap { $0["p"]?.stringValue.map { String($0.dropFirst(docs.count)) } })
        }
        func waitUntil(_ what: String, _ condition: () throws -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while try !condition() {
                guard ContinuousClock.now < deadline else { throw TestFailure("waited a minute for \(what)") }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let first = try indexed()
        #expect(first.contains("/media") && !first.contains("/media/song.txt") && !first.contains("/media/.nomedia"), "\(first)")
        #expect(first.contains("/.hidden/secret.txt") && first.contains("/.dotfile.txt"))
        #expect(try byText() == ["/keep.txt", "/private/p.txt", "/notext/n.txt"])

        // Excluded whole: its rows go, and a file made in it later stays out.
        let exclude = try ProcessRunner.folio(["index", "exclude", docs + "/private"], environment: world.environment)
        #expect(exclude.status == 0, "\(exclude.stderr)")
        #expect(try !indexed().contains { $0.hasPrefix("/private") })
        try "alpha again".write(toFile: docs + "/private/later.txt", atomically: false, encoding: .utf8)
        try "alpha elsewhere".write(toFile: docs + "/later.txt", atomically: false, encoding: .utf8)
        try await waitUntil("the text of later.txt") { try byText().contains("/later.txt") }
        #expect(try !indexed().contains("/private/later.txt"))

        // Excluded for its text: the names stay, the text goes.
        #expect(try ProcessRunner.folio(["index", "exclude", "--text", docs + "/notext"], environment: world.environment).status == 0)
        #expect(try indexed().contains("/notext/n.txt"))
        #expect(try byText() == ["/keep.txt", "/later.txt"])
        let status = try ProcessRunner.folio(["index", "status"], environment: world.environment).stdout
        #expect(status.contains("excluded: \(docs)/private (not indexed)"), "\(status)")
        #expect(status.contains("excluded: \(docs)/notext (text not read)"))
        #expect(status.contains("excluded: \(docs)/media (what is in it not indexed (a marker file))"))

        // Included again: everything back, text read.
        #expect(try ProcessRunner.folio(["index", "include", docs + "/private"], environment: world.environment).status == 0)
        #expect(try ProcessRunner.folio(["index", "include", docs + "/notext"], environment: world.environment).status == 0)
        try await world.waitUntilIdle()
        #expect(try byText() == ["/keep.txt", "/later.txt", "/private/p.txt", "/private/later.txt", "/notext/n.txt"])

        // The marker gone: what is in the folder comes in.
        try FileManager.default.removeItem(atPath: docs + "/media/.nomedia")
        try await waitUntil("the song's text") { try byText().contains("/media/song.txt") }

        let bad = try ProcessRunner.folio(["index", "include", docs + "/keep.txt"], environment: world.environment)
        #expect(bad.status != 0 && bad.stderr.contains("is not a folder excluded from the index"), "\(bad)")
    }
}
