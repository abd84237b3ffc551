import Foundation
import FolioTesting
import FolioTestTraits
import Testing

@Suite("folio command line", .elasticPool)
struct CommandLineTests {
    func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test func typesShowInEveryForm() throws {
        for query in ["public.jpeg", "jpg", ".JPG", "image/jpeg"] {
            let out = try ProcessRunner.folio(["types", "show", query, "--json"])
            #expect(out.status == 0)
            let info = try #require(try json(out.stdout) as? [String: Any])
            #expect(info["identifier"] as? String == "public.jpeg", "for \(query)")
            #expect(info["preferredMIMEType"] as? String == "image/jpeg")
            #expect((info["supertypes"] as? [String])?.contains("public.data") == true)
        }
        let text = try ProcessRunner.folio(["types", "show", "pdf"])
        #expect(text.stdout.contains("identifier: com.adobe.pdf"))
        let unknown = try ProcessRunner.folio(["types", "show", "xyzzy", "--json"])
        #expect((try json(unknown.stdout) as? [String: Any])?["dynamic"] as? Bool == true)
        #expect(try ProcessRunner.folio(["types", "show", "not.a.thing.at.all"]).status == 2)
    }

    @Test func typesConformsAnswersByExitStatus() throws {
        #expect(try ProcessRunner.folio(["types", "conforms", "public.jpeg", "public.image"]).status == 0)
        #expect(try ProcessRunner.folio(["types", "conforms", "png", "audio/mpeg"]).status == 1)
        let out = try ProcessRunner.folio(["types", "conforms", "jpg", "public.data", "--json"])
        #expect((try json(out.stdout) as? [String: Any])?["result"] as? Bool == true)
    }

    @Test func typesOfFiles() throws {
        let dir = try TemporaryDirectory()
        try dir.write("a.pdf", Data(Corpus.pdf))
        try dir.write("noext", Data(Corpus.png))
        let out = try ProcessRunner.folio(["types", "of", dir.path + "/a.pdf", dir.path + "/noext", "--json"])
        #expect(out.status == 0)
        let list = try #require(try json(out.stdout) as? [[String: Any]])
        #expect(list.map { $0["identifier"] as? String } == ["com.adobe.pdf", "public.png"])
        let missing = try ProcessRunner.folio(["types", "of", dir.path + "/missing"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no such file"))
    }

    @Test func appsAndHandlersThroughTheCommandLine() throws {
        let dir = try TemporaryDirectory("cli-apps")
        let env = dir.xdgEnvironment()
        let manifest = try dir.write("Info.plist", particlesPlist)
        let installed = try ProcessRunner.folio(["app", "register", manifest.path], environment: env)
        #expect(installed.status == 0, "\(installed.stderr)")
        let doc = try dir.write("doc.particles", "{}")
        let handlers = try ProcessRunner.folio(["types", "handlers", doc.path, "--json"], environment: env)
        let info = try #require(try json(handlers.stdout) as? [String: Any])
        #expect(info["contentType"] as? String == "com.example.particles")
        #expect((info["handler"] as? [String: Any])?["id"] as? String == "com.example.Particles")
        #expect((info["handler"] as? [String: Any])?["reason"] as? String == "rank")

        let bad = try dir.write("Bad.plist", "<plist><dict><key>CFBundleIdentifier</key><integer>3</integer></dict></plist>")
        let refused = try ProcessRunner.folio(["app", "register", bad.path], environment: env)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("CFBundleIdentifier: expected a string"))
        #expect(try ProcessRunner.folio(["app", "list"], environment: env).stdout.contains("com.example.Particles"))
        #expect(try ProcessRunner.folio(["types", "set-default", "public.png", "com.example.absent"], environment: env).status != 0)
    }

    @Test func benchmarkSmokeRun() throws {
        let out = try ProcessRunner.folio(["bench", "types", "--iterations", "2000", "--rounds", "1"])
        #expect(out.status == 0)
        #expect(out.stdout.contains("UTType(filenameExtension:)"))
        #expect(out.stdout.contains("baseline Dictionary<String, String> lookup"))
        let wire = try ProcessRunner.folio(["bench", "wire", "--iterations", "2000", "--rounds", "1"])
        #expect(wire.status == 0 && wire.stdout.contains("claim frame, typed") && wire.stdout.contains("release notification, typed"), "\(wire.stderr)")
    }

    @Test func bookmarksFromTheCommandLine() throws {
        let dir = try TemporaryDirectory("bookmark-cli")
        let env = dir.xdgEnvironment()
        let file = try dir.write("Notes/today.txt", "x")
        let created = try ProcessRunner.folio(["bookmark", "create", file.path], environment: env)
        #expect(created.status == 0, "\(created.stderr)")
        let bookmark = created.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let moved = dir.child("Notes/yesterday.txt")
        try FileManager.default.moveItem(at: file, to: moved)
        let resolved = try ProcessRunner.folio(["bookmark", "resolve", "--json", bookmark], environment: env)
        #expect(resolved.stdout.contains(#""path":"\#(moved.path)""#) && resolved.stdout.contains(#""stale":true"#), "\(resolved.stdout)")
        // Another user's key (another config folder) refuses the same data.
        let other = try TemporaryDirectory("bookmark-cli-other")
        let foreign = try ProcessRunner.folio(["bookmark", "resolve", bookmark], environment: other.xdgEnvironment())
        #expect(foreign.status != 0 && foreign.stderr.contains("signature"))
        let smoke = try ProcessRunner.folio(["bench", "bookmarks", "--iterations", "200", "--rounds", "1"], environment: env)
        #expect(smoke.status == 0 && smoke.stdout.contains("after a move"), "\(smoke.stderr)")
    }

    @Test func coordinationBenchmarkSmokeRun() throws {
        let dir = try TemporaryDirectory("bench")
        let out = try ProcessRunner.folio(
            ["bench", "coordination", "--iterations", "200", "--seconds", "0.1"], environment: dir.xdgEnvironment())
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("coordinated write via daemon p50"))
        #expect(out.stdout.contains("baseline raw Unix-socket ping-pong"))
        #expect(out.stdout.contains("writer hand-off via daemon"))
    }
}

let particlesPlist = """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0"><dict>
      <key>CFBundleIdentifier</key><string>com.example.Particles</string>
      <key>CFBundleDocumentTypes</key><array><dict>
        <key>CFBundleTypeRole</key><string>Editor</string>
        <key>LSHandlerRank</key><string>Owner</string>
        <key>LSItemContentTypes</key><array><string>com.example.particles</string></array>
      </dict></array>
      <key>UTExportedTypeDeclarations</key><array><dict>
        <key>UTTypeIdentifier</key><string>com.example.particles</string>
        <key>UTTypeConformsTo</key><array><string>public.data</string></array>
        <key>UTTypeTagSpecification</key><dict><key>public.filename-extension</key><array><string>particles</string></array></dict>
      </dict></array>
    </dict></plist>
    """

enum Corpus {
    static let pdf = Array("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".utf8)
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52]
}
