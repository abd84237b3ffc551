import Foundation
import FolioTesting
import FolioTestTraits
import Testing
@testable import UniformTypes

/// An Info.plist in the style of Apple's "Particles" document-browser sample.
let particlesInfoPlist = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
        <key>CFBundleIdentifier</key>
        <string>com.example.apple-samplecode.Particles</string>
        <key>CFBundleName</key>
        <string>Particles</string>
        <key>CFBundleVersion</key>
        <string>1</string>
        <key>CFBundleDocumentTypes</key>
        <array>
            <dict>
                <key>CFBundleTypeName</key>
                <string>Particles Document</string>
                <key>CFBundleTypeRole</key>
                <string>Editor</string>
                <key>LSHandlerRank</key>
                <string>Owner</string>
                <key>LSItemContentTypes</key>
                <array>
                    <string>com.example.apple-samplecode.particles</string>
                </array>
            </dict>
            <dict>
                <key>CFBundleTypeName</key>
                <string>Image</string>
                <key>CFBundleTypeRole</key>
                <string>Viewer</string>
                <key>LSHandlerRank</key>
                <string>Alternate</string>
                <key>LSItemContentTypes</key>
                <array>
                    <string>public.image</string>
                </array>
            </dict>
        </array>
        <key>UTExportedTypeDeclarations</key>
        <array>
            <dict>
                <key>UTTypeConformsTo</key>
                <array>
                    <string>public.data</string>
                    <string>public.content</string>
                </array>
                <key>UTTypeDescription</key>
                <string>Particles Document</string>
                <key>UTTypeIdentifier</key>
                <string>com.example.apple-samplecode.particles</string>
                <key>UTTypeTagSpecification</key>
                <dict>
                    <key>public.filename-extension</key>
                    <string>particles</string>
                    <key>public.mime-type</key>
                    <string>application/x-particles</string>
                </dict>
                <key>UTTypeReferenceURL</key>
                <string>https://developer.apple.com/documentation/uikit/view_controllers/building_a_document_browser-based_app</string>
            </dict>
        </array>
        <key>LSSupportsOpeningDocumentsInPlace</key>
        <true/>
        <key>UISupportsDocumentBrowser</key>
        <true/>
    </dict>
    </plist>
    """

@Suite("App manifests", .elasticPool)
struct AppManifestTests {
    @Test func xmlInfoPlistParsesAndDrivesHandlerChoice() throws {
        let manifest = try AppManifest(data: Data(particlesInfoPlist.utf8))
        #expect(manifest.bundleIdentifier == "com.example.apple-samplecode.Particles")
        #expect(manifest.name == "Particles")
        #expect(manifest.supportsOpeningDocumentsInPlace)
        #expect(manifest.exportedTypes.first?.tags[.filenameExtension] == ["particles"])
        #expect(manifest.documentTypes.map(\.rank) == [.owner, .alternate])

        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        let handlers = HandlerRegistry(types: registry, paths: nil)
        try handlers.install(manifest)
        let type = try #require(registry.type(tag: "particles", tagClass: .filenameExtension))
        #expect(type.identifier == "com.example.apple-samplecode.particles")
        #expect(type.isDeclared && !type.isPublic)
        #expect(type.referenceURL?.host == "developer.apple.com")
        #expect(registry.type(tag: "application/x-particles", tagClass: .mimeType) == type)

        let dir = try TemporaryDirectory()
        let file = try dir.write("Sample.particles", "{}")
        #expect(try handlers.choice(forItemAt: file)?.handler == .app("com.example.apple-samplecode.Particles"))
        // The app's Alternate claim on public.image makes it a PNG handler when nothing better exists.
        #expect(handlers.choice(for: .png)?.handler == .app("com.example.apple-samplecode.Particles"))
        #expect(handlers.choice(for: .png)?.matchedType == .image)
    }

    @Test func binaryPlistAndJSONParseTheSame() throws {
        let xml = try PropertyListSerialization.propertyList(from: Data(particlesInfoPlist.utf8), format: nil)
        let binary = try PropertyListSerialization.data(fromPropertyList: xml, format: .binary, options: 0)
        #expect(binary.starts(with: Array("bplist".utf8)))
        let fromBinary = try AppManifest(data: binary)
        #expect(fromBinary == (try AppManifest(data: Data(particlesInfoPlist.utf8))))
        let json = """
            {"CFBundleIdentifier": "com.example.json-app",
             "UTExportedTypeDeclarations": [{"UTTypeIdentifier": "com.example.json-doc",
               "UTTypeConformsTo": "public.json",
               "UTTypeTagSpecification": {"public.filename-extension": ["jdoc"], "com.apple.ostype": "JDOC"}}],
             "CFBundleDocumentTypes": [{"LSItemContentTypes": ["com.example.json-doc"], "LSHandlerRank": "Default"}]}
            """
        let manifest = try AppManifest(data: Data(json.utf8))
        #expect(manifest.exportedTypes.first?.conformsTo == ["public.json"])
        // Non-standard tag classes are dropped.
        #expect(manifest.exportedTypes.first?.tags.keys.map(\.rawValue) == ["public.filename-extension"])
    }

    @Test(arguments: [
        ("{\"CFBundleIdentifier\": 42}", "CFBundleIdentifier: expected a string, found a number"),
        ("{\"CFBundleName\": \"x\"}", "CFBundleIdentifier: missing"),
        ("[1, 2]", "top level: expected a dictionary"),
        ("{\"CFBundleIdentifier\": \"noDots\"}", "not a reverse-DNS identifier"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"UTExportedTypeDeclarations\": {}}", "UTExportedTypeDeclarations: expected an array"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"UTExportedTypeDeclarations\": [{\"UTTypeIdentifier\": \"public.mine\"}]}", "reserved"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"UTImportedTypeDeclarations\": [{\"UTTypeIdentifier\": \"dyn.ah62d4rv4ge81g6pq\"}]}", "reserved"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"UTExportedTypeDeclarations\": [{\"UTTypeIdentifier\": \"a.b.c\", \"UTTypeConformsTo\": [1]}]}", "UTTypeConformsTo[0]: expected a string"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"UTExportedTypeDeclarations\": [{\"UTTypeIdentifier\": \"a b\"}]}", "not a valid type identifier"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"UTExportedTypeDeclarations\": [{\"UTTypeIdentifier\": \"a.x\", \"UTTypeConformsTo\": \"a.y\"}, {\"UTTypeIdentifier\": \"a.y\", \"UTTypeConformsTo\": \"a.x\"}]}", "conformance cycle"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"UTExportedTypeDeclarations\": [{\"UTTypeIdentifier\": \"a.x\", \"UTTypeConformsTo\": \"a.x\"}]}", "conformance cycle"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"UTExportedTypeDeclarations\": [{\"UTTypeIdentifier\": \"a.x\", \"UTTypeTagSpecification\": {\"public.mime-type\": \"nonsense\"}}]}", "not a MIME type"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"CFBundleDocumentTypes\": [{\"LSHandlerRank\": \"Supreme\", \"LSItemContentTypes\": [\"public.png\"]}]}", "not one of Owner"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"CFBundleDocumentTypes\": [{\"CFBundleTypeRole\": \"Editor\"}]}", "claims no type"),
        ("{\"CFBundleIdentifier\": \"a.b\", \"LSSupportsOpeningDocumentsInPlace\": [true]}", "expected a Boolean"),
        ("<plist><dict><key>CFBundleIdentifier", "not a valid property list"),
        ("\u{0}\u{1}\u{2}garbage", "neither a property list nor a JSON object"),
    ])
    func malformedManifestsAreRefusedWithTheirKeyNamed(_ input: String, _ expected: String) {
        do {
            _ = try AppManifest(data: Data(input.utf8), source: "test.json")
            Issue.record("accepted a malformed manifest: \(input)")
        } catch {
            #expect(error.message.contains(expected), "message was: \(error.message)")
            #expect(error.message.hasPrefix("test.json: "))
        }
    }

    @Test func hugeManifestsAreRefusedBeforeParsing() throws {
        let huge = Data(count: AppManifest.maximumSize + 1)
        #expect(throws: UniformTypeError.self) { try AppManifest(data: huge) }
        do { _ = try AppManifest(data: huge) } catch { #expect(error.code == .manifestTooLarge) }
        let manyEntries = "{\"CFBundleIdentifier\": \"a.b\", \"CFBundleDocumentTypes\": [" +
            Array(repeating: "{\"LSItemContentTypes\": \"public.png\"}", count: AppManifest.maximumEntries + 1).joined(separator: ",") + "]}"
        #expect(throws: UniformTypeError.self) { try AppManifest(data: Data(manyEntries.utf8)) }
    }

    @Test func crossManifestCycleIsRefusedAndTheRegistryStaysUsable() throws {
        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        let first = try AppManifest(data: Data("""
            {"CFBundleIdentifier": "com.example.first", "UTExportedTypeDeclarations": [
              {"UTTypeIdentifier": "com.example.x", "UTTypeConformsTo": "com.example.y", "UTTypeTagSpecification": {"public.filename-extension": "xx"}}]}
            """.utf8))
        let second = try AppManifest(data: Data("""
            {"CFBundleIdentifier": "com.example.second", "UTExportedTypeDeclarations": [
              {"UTTypeIdentifier": "com.example.y", "UTTypeConformsTo": "com.example.x"}]}
            """.utf8))
        try registry.register(first)
        #expect(throws: UniformTypeError.self) { try registry.register(second) }
        #expect(registry.apps.map(\.bundleIdentifier) == ["com.example.first"])
        #expect(registry.type(tag: "xx", tagClass: .filenameExtension, conformingTo: nil)?.identifier == "com.example.x")
        #expect(registry.type(tag: "jpg", tagClass: .filenameExtension) == .jpeg)
    }

    @Test func manifestsInTheAppsFolderLoadAndBadOnesAreSkipped() throws {
        let dir = try TemporaryDirectory()
        try dir.write("Apps/particles.plist", particlesInfoPlist)
        try dir.write("Apps/broken.json", "{\"CFBundleIdentifier\": 5}")
        try dir.write("Apps/notes.txt", "ignored")
        let registry = TypeRegistry(configuration: .init(mimeDirectories: [], appsDirectory: dir.path + "/Apps"))
        #expect(registry.apps.map(\.bundleIdentifier) == ["com.example.apple-samplecode.Particles"])
    }
}
