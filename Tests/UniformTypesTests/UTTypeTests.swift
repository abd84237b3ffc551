import Foundation
import Testing
@testable import UniformTypes

// Without `.elasticPool`, on purpose: this suite runs on Swift's own cooperative pool, as apps'
// code does, and shows the library's type lookups need no other threads.
@Suite("UTType")
struct UTTypeTests {
    /// Types compare and hash by identifier, ignoring case; `isFolder` says so of `public.folder`
    /// in any case.
    @Test func typesCompareAndHashByIdentifierIgnoringCase() throws {
        let shouting = try #require(UTType("PUBLIC.Folder"))
        #expect(shouting == .folder && shouting.isFolder && UTType.folder.isFolder)
        #expect(shouting.hashValue == UTType.folder.hashValue)
        #expect(Set([UTType.folder, shouting, .plainText]).count == 2)
        #expect(UTType.plainText != .folder && !UTType.plainText.isFolder && !UTType.package.isFolder)
        // Not the same identifier with one letter more, nor one whose letters differ beyond case.
        let undeclared = try #require(UTType(identifier: "public.foldeR.x", allowUndeclared: true))
        #expect(undeclared != .folder && !undeclared.isFolder)
    }

    /// A file's type by its extension is looked up once per snapshot of the shared registry: an app
    /// registered later declares the extension's type for the names asked after.
    @Test func aFilesTypeFollowsTheRegistry() throws {
        let name = "report.foliotypecachetest"
        #expect(UTType.ofFile(named: name).isDynamic)
        #expect(UTType.ofFile(named: name).isDynamic)
        let manifest = try AppManifest(data: Data("""
            {"CFBundleIdentifier": "com.example.typecache", "UTExportedTypeDeclarations": [
              {"UTTypeIdentifier": "com.example.typecache", "UTTypeConformsTo": "public.data",
               "UTTypeTagSpecification": {"public.filename-extension": "foliotypecachetest"}}]}
            """.utf8))
        try TypeRegistry.shared.register(manifest)
        defer { TypeRegistry.shared.unregister(bundleIdentifier: "com.example.typecache") }
        #expect(UTType.ofFile(named: name).identifier == "com.example.typecache")
        #expect(UTType.ofFile(named: "notes.txt") == .plainText && UTType.ofFile(named: "README") == .data)
        TypeRegistry.shared.unregister(bundleIdentifier: "com.example.typecache")
        #expect(UTType.ofFile(named: name).isDynamic)
    }

    @Test func dynamicEncodingMatchesApples() {
        // The reverse-engineered example: ?0=6:1=sql → dyn.ah62d4rv4ge81g6pq.
        #expect(DynamicTypeCoding.identifier(tag: "sql", tagClass: .filenameExtension, conformsTo: "public.data") == "dyn.ah62d4rv4ge81g6pq")
        let spec = DynamicTypeCoding.specification(of: "dyn.ah62d4rv4ge81g6pq")
        #expect(spec?.tags[.filenameExtension] == ["sql"])
        #expect(spec?.conformsTo == ["public.data"])
    }

    @Test(arguments: ["dyn.", "dyn.a", "dyn.a!!!", "dyn.aaaaaaaa", "dyn.b62d4rv4ge81g6pq", "dyn.a" + String(repeating: "h", count: 600)])
    func malformedDynamicIdentifiersAreNotTypes(_ identifier: String) {
        #expect(UTType(identifier) == nil)
    }

    @Test func unknownMIMETypeIsDynamicAndRoundTrips() throws {
        let type = try #require(UTType(mimeType: "application/x-folio-unknown"))
        #expect(type.isDynamic)
        #expect(type.preferredMIMEType == "application/x-folio-unknown")
        #expect(UTType(type.identifier)?.preferredMIMEType == "application/x-folio-unknown")
    }

    @Test func conformingToFiltersCandidates() throws {
        // A JPEG extension asked for as text is not public.jpeg: Apple gives a dynamic type.
        let type = try #require(UTType(filenameExtension: "jpg", conformingTo: .text))
        #expect(type.isDynamic)
        #expect(type.conforms(to: .text))
        #expect(UTType(filenameExtension: "") == nil)
        #expect(UTType(filenameExtension: "a/b") == nil)
    }

    @Test func identifiersAreCaseInsensitive() throws {
        let upper = try #require(UTType("PUBLIC.JPEG"))
        #expect(upper == .jpeg)
        #expect(Set([upper, .jpeg]).count == 1)
    }

    @Test func unknownIdentifiers() {
        #expect(UTType("com.example.nothing-declared") == nil)
        let kept = UTType(identifier: "com.example.nothing-declared", allowUndeclared: true)
        #expect(kept?.isDeclared == false)
        #expect(kept?.isDynamic == false)
        #expect(kept?.conforms(to: .data) == false)
        #expect(UTType(identifier: "not an identifier", allowUndeclared: true) == nil)
    }

    @Test func physicalAndFunctionalTrees() {
        #expect(UTType.folder.conforms(to: .directory))
        #expect(UTType.package.conforms(to: .directory))
        #expect(UTType.applicationBundle.conforms(to: .package))
        #expect(UTType.volume.conforms(to: .folder))
        #expect(UTType.symbolicLink.conforms(to: .item))
        #expect(!UTType.folder.conforms(to: .data))
        #expect(UTType.pdf.conforms(to: .compositeContent))
        #expect(UTType.mp3.conforms(to: .audiovisualContent))
        #expect(UTType.utf8PlainText.conforms(to: .text))
        #expect(UTType.json.conforms(to: .text))
        #expect(UTType.spreadsheet.conforms(to: .content))
        #expect(UTType(filenameExtension: "xlsx")?.conforms(to: .spreadsheet) == true)
        #expect(UTType(filenameExtension: "xlsx")?.conforms(to: .zip) == true)
        #expect(UTType.pythonScript.conforms(to: .sourceCode))
        #expect(UTType.heic.conforms(to: .image))
    }

    @Test func mustHaveTypesAreDeclared() {
        let identifiers = [
            "public.item", "public.content", "public.composite-content", "public.data", "public.directory", "public.folder",
            "public.volume", "com.apple.package", "com.apple.bundle", "public.symlink", "com.apple.alias-file",
            "com.apple.resolvable", "public.url", "public.file-url", "public.executable", "com.apple.application-bundle",
            "public.text", "public.plain-text", "public.utf8-plain-text", "public.utf16-plain-text", "public.rtf",
            "com.apple.rtfd", "public.html", "public.xml", "public.json", "public.yaml", "public.delimited-values-text",
            "public.comma-separated-values-text", "public.tab-separated-values-text", "public.source-code",
            "public.c-source", "public.swift-source", "public.script", "public.shell-script", "public.python-script",
            "com.apple.property-list", "com.apple.xml-property-list", "com.apple.binary-property-list", "com.adobe.pdf",
            "public.image", "public.jpeg", "public.png", "com.compuserve.gif", "public.tiff", "public.heic", "public.heif",
            "org.webmproject.webp", "public.svg-image", "com.microsoft.bmp", "com.microsoft.ico", "public.camera-raw-image",
            "public.audiovisual-content", "public.movie", "public.video", "public.audio", "public.mp3", "public.mpeg-4",
            "public.mpeg-4-audio", "com.apple.quicktime-movie", "com.microsoft.waveform-audio", "public.aiff-audio",
            "public.archive", "public.zip-archive", "org.gnu.gnu-zip-archive", "public.bzip2-archive", "public.spreadsheet",
            "public.presentation", "public.database", "org.idpf.epub-container", "public.vcard", "public.font", "public.log",
        ]
        for identifier in identifiers {
            #expect(UTType(identifier)?.isDeclared == true, "\(identifier) should be declared")
        }
    }

    @Test func descriptionsAreInheritedDepthFirst() throws {
        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        try registry.register(
            AppManifest(
                bundleIdentifier: "com.example.app",
                exportedTypes: [TypeDeclaration(identifier: "com.example.undescribed", conformsTo: ["public.jpeg", "public.text"], origin: .exported)]))
        let type = try #require(registry.type(withIdentifier: "com.example.undescribed"))
        #expect(type.localizedDescription == "JPEG image")
    }

    @Test func codableRoundTrip() throws {
        let data = try JSONEncoder().encode([UTType.png, UTType.pdf])
        #expect(String(decoding: data, as: UTF8.self) == #"["public.png","com.adobe.pdf"]"#)
        #expect(try JSONDecoder().decode([UTType].self, from: data) == [.png, .pdf])
    }
}
