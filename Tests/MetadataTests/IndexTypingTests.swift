@testable import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

@Suite("The index types files by their content", .elasticPool)
struct IndexTypingTests {
    /// After the crawl, every item's type in the index is what content detection (and so `folio
    /// types of`) says: files whose names say nothing, say several things or are overruled by
    /// `user.mime_type` are typed by their bytes; a query over the type tree finds them; a change
    /// of content or name types the file again, live; a restart's listing keeps the types.
    @Test func typesAreThoseOfContentDetection() async throws {
        let world = try await IndexWorld("index-types") { dir in
            try dir.write("docs/picture", Data(ThumbnailTests.png))
            try dir.write("docs/paper", Data(ThumbnailTests.pdf.utf8))
            try dir.write("docs/notes", "plain words\n")
            try dir.write("docs/empty", "")
            try dir.write("docs/binary", Data([0, 1, 2, 3, 0xFF]))
            try dir.write("docs/Makefile", "all:\n\ttrue\n")
            try dir.write("docs/archive.tar.gz", Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0]))
            try dir.write("docs/shot.png", Data(ThumbnailTests.png))
            try dir.write("docs/mislabelled.xyzzy", Data(ThumbnailTests.png))
            try dir.write("docs/Notes.rtfd/TXT.rtf", "{\\rtf1 hello}")
            let labelled = try dir.write("docs/labelled", "words, not a picture")
            try FilePath(labelled.path).setExtendedAttribute(named: "user.mime_type", to: Array("image/png".utf8))
            try dir.write("docs/photo.png", "words named as a picture")
        }
        let docs = world.docs.path
        try await world.waitUntilIdle()

        func indexed() throws -> [String: (type: String, pending: String)] {
            var types: [String: (String, String)] = [:]
            for row in try world.sql("SELECT path, type, type_pending FROM items WHERE path >= '\(docs)/' AND path < '\(docs)0'") {
                types[row[0]] = (row[1], row[2])
            }
            return types
        }
        func detected(_ path: String) throws -> String { try UTType.contentType(ofItemAt: URL(fileURLWithPath: path)).type.identifier }
        var types = try indexed()
        #expect(types.count == 13, "\(types.keys.sorted())")
        for (path, found) in types {
            #expect(found.type == (try detected(path)), "\(path)")
            #expect(found.pending == "0", "\(path)")
        }
        // The answers themselves, so that agreement cannot come from both being wrong alike.
        #expect(types[docs + "/picture"]?.type == "public.png")
        #expect(types[docs + "/paper"]?.type == "com.adobe.pdf")
        #expect(types[docs + "/notes"]?.type == "public.plain-text")
        #expect(types[docs + "/binary"]?.type == "public.data")
        #expect(types[docs + "/labelled"]?.type == "public.png")
        #expect(types[docs + "/Notes.rtfd"]?.type == "com.apple.rtfd")
        #expect(types[docs + "/archive.tar.gz"]?.type != "org.gnu.gnu-zip-archive")
        // `folio types of` says the same.
        let out = try ProcessRunner.folio(["types", "of", docs + "/picture", docs + "/Makefile", "--json"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
        #expect(list.map { $0["identifier"] as? String } == [types[docs + "/picture"]?.type, types[docs + "/Makefile"]?.type])

        // A query over the type tree finds the images whatever their names, and hears of a file
        // whose content becomes an image, and of one renamed so that its name decides.
        let query = try world.query("kMDItemContentTypeTree == 'public.image'")
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        let images = Set((query.results as? [MetadataItem])?.map(\.path) ?? [])
        #expect(images == Set(["picture", "shot.png", "mislabelled.xyzzy", "labelled", "photo.png"].map { docs + "/" + $0 }), "\(images.sorted())")
        try Data(ThumbnailTests.png).write(to: URL(fileURLWithPath: docs + "/notes"))
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(docs + "/notes") } })
        try FileManager.default.moveItem(atPath: docs + "/binary", toPath: docs + "/binary.png")
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(docs + "/binary.png") } })
        // A file given its type by the attribute after it was typed: typed again (the attribute
        // changes neither its size nor its date).
        try FilePath(docs + "/empty").setExtendedAttribute(named: "user.mime_type", to: Array("image/png".utf8))
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(docs + "/empty") } })
        // Renamed so that its name no longer decides: its content does, and it is no image.
        try FileManager.default.moveItem(atPath: docs + "/photo.png", toPath: docs + "/photo")
        #expect(await recorder.wait { recorder.updates.contains { $0.removed.contains(docs + "/photo.png") } })
        try await world.waitUntilIdle()
        #expect(await recorder.wait { !((query.results as? [MetadataItem]) ?? []).contains { $0.path == docs + "/photo" } })
        #expect(try indexed()[docs + "/photo"]?.type == "public.plain-text")
        query.stop()

        // A restart lists everything again: the types stay, none waits.
        try world.restart()
        try await world.waitUntilIdle()
        types = try indexed()
        for (path, found) in types {
            #expect(found.type == (try detected(path)), "\(path)")
            #expect(found.pending == "0", "\(path)")
        }
        #expect(types[docs + "/notes"]?.type == "public.png")
        #expect(types[docs + "/empty"]?.type == "public.png")
    }
}
