import Foundation
import FolioSystem
import FolioTesting
import FolioTestTraits
import Testing
@testable import UniformTypes

@Suite("Handler choice", .elasticPool)
struct HandlerRegistryTests {
    func app(_ id: String, _ rank: HandlerRank, _ types: [String], role: DocumentRole = .editor) -> AppManifest {
        AppManifest(bundleIdentifier: id, documentTypes: [DocumentTypeClaim(role: role, rank: rank, contentTypes: types)])
    }

    @Test func installingNeverTakesOverAnExistingDefault() throws {
        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        let handlers = HandlerRegistry(types: registry, paths: nil)
        try handlers.install(app("com.example.viewer", .default, ["public.png"]))
        #expect(handlers.choice(for: .png)?.handler == .app("com.example.viewer"))
        // A later app with a higher rank is offered, but the existing default stays.
        try handlers.install(app("com.example.greedy", .owner, ["public.png"]))
        let choice = try #require(handlers.choice(for: .png))
        #expect(choice.handler == .app("com.example.viewer"))
        #expect(choice.reason == .established)
        #expect(handlers.candidates(for: .png).map(\.bundleIdentifier) == ["com.example.greedy", "com.example.viewer"])
        // A type that had no handler goes to the new app by rank.
        try handlers.install(app("com.example.gif", .default, ["com.compuserve.gif"]))
        #expect(handlers.choice(for: .gif)?.handler == .app("com.example.gif"))
    }

    @Test func theUsersExplicitChoiceWinsAndPersists() throws {
        let dir = try TemporaryDirectory()
        let paths = FolioPaths(environment: dir.xdgEnvironment())
        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        let handlers = HandlerRegistry(types: registry, paths: paths)
        try handlers.install(app("com.example.owner", .owner, ["public.png"]))
        try handlers.install(app("com.example.images", .alternate, ["public.image"]))
        #expect(handlers.choice(for: .png)?.handler == .app("com.example.owner"))
        // A choice for a supertype beats a rank-based claim on the subtype.
        try handlers.setDefaultHandler("com.example.images", for: .image)
        #expect(handlers.choice(for: .png)?.handler == .app("com.example.images"))
        #expect(handlers.choice(for: .png)?.reason == .userChoice)
        #expect(throws: UniformTypeError.self) { try handlers.setDefaultHandler("com.example.absent", for: .png) }
        // Another process (a new registry over the same files) sees the choice.
        let again = HandlerRegistry(types: registry, paths: paths)
        #expect(again.choice(for: .png)?.handler == .app("com.example.images"))
        #expect(FileManager.default.fileExists(atPath: paths.configDirectory + "/handlers.json"))
        // Uninstalling the chosen app drops the choice.
        again.uninstall(bundleIdentifier: "com.example.images")
        #expect(again.choice(for: .png)?.handler == .app("com.example.owner"))
    }

    @Test func mimeappsListDefaultsAreHonoured() throws {
        let dir = try TemporaryDirectory()
        try dir.write("config/mimeapps.list", """
            [Added Associations]
            image/png=other.desktop;

            [Default Applications]
            image/png=org.gnome.eog.desktop;org.other.desktop;
            bad line without equals
            not/a type=x.desktop
            """)
        try dir.write("config/testdesk-mimeapps.list", "[Default Applications]\napplication/pdf=org.gnome.Evince.desktop\n")
        let paths = FolioPaths(environment: dir.xdgEnvironment())
        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        let handlers = HandlerRegistry(types: registry, paths: paths, desktops: ["TestDesk"])
        try handlers.install(app("com.example.owner", .owner, ["public.png", "com.adobe.pdf"]))
        #expect(handlers.choice(for: .png)?.handler == .desktopEntry("org.gnome.eog.desktop"))
        #expect(handlers.choice(for: .png)?.reason == .mimeappsDefault)
        #expect(handlers.choice(for: .pdf)?.handler == .desktopEntry("org.gnome.Evince.desktop"))
        // A Folio choice by the user still wins over mimeapps.list.
        try handlers.setDefaultHandler("com.example.owner", for: .png)
        #expect(handlers.choice(for: .png)?.handler == .app("com.example.owner"))
    }

    @Test(.enabled(if: hasSharedMimeInfo)) func handlerLookupWalksTheConformanceChain() throws {
        // The peers' bug: .opus detected as a subtype of Ogg audio, and the default for audio unused.
        let registry = TypeRegistry(configuration: .init(mimeDirectories: [systemMimeDirectory]))
        let handlers = HandlerRegistry(types: registry, paths: nil)
        try handlers.install(app("com.example.player", .default, ["public.audio"], role: .viewer))
        let opus = try #require(registry.type(tag: "opus", tagClass: .filenameExtension))
        #expect(opus.origin == .sharedMimeInfo)
        let choice = try #require(handlers.choice(for: opus))
        #expect(choice.handler == .app("com.example.player"))
        #expect(choice.matchedType == .audio)
    }

    @Test func legacyExtensionClaimsMatchTheDocumentsOwnType() throws {
        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        let handlers = HandlerRegistry(types: registry, paths: nil)
        try handlers.install(AppManifest(
            bundleIdentifier: "com.example.legacy",
            documentTypes: [DocumentTypeClaim(contentTypes: [], extensions: ["jpg"])]))
        #expect(handlers.choice(for: .jpeg)?.handler == .app("com.example.legacy"))
        #expect(handlers.choice(for: .png) == nil)
    }
}
