import Foundation
import Testing
@testable import UniformTypes
import FolioTestTraits

/// apple-semantics §9, scenarios 42–45.
@Suite("Apple scenarios 42–45", .elasticPool)
struct AppleScenarioTests {
    @Test func jpegConformsToItsWholeChain() throws {  // 42
        let jpeg = try #require(UTType("public.jpeg"))
        for parent in ["public.image", "public.data", "public.content", "public.item"] {
            #expect(jpeg.conforms(to: try #require(UTType(parent))), "public.jpeg should conform to \(parent)")
        }
        #expect(jpeg.conforms(to: jpeg))
        #expect(!jpeg.isSubtype(of: jpeg))
        #expect(jpeg.isSubtype(of: .image))
        #expect(UTType.image.isSupertype(of: jpeg))
        #expect(!jpeg.conforms(to: .audio))
        #expect(jpeg.supertypes == Set([.image, .data, .content, .item]))
    }

    @Test func extensionAndMIMELookups() throws {  // 43
        let jpg = try #require(UTType(filenameExtension: "JPG"))
        #expect(jpg.identifier == "public.jpeg")
        #expect(jpg.preferredFilenameExtension == "jpeg")
        #expect(jpg.preferredMIMEType == "image/jpeg")
        #expect(UTType(mimeType: "application/pdf")?.identifier == "com.adobe.pdf")
        #expect(UTType(mimeType: "APPLICATION/PDF")?.identifier == "com.adobe.pdf")
        #expect(UTType(tag: "jpg", tagClass: .filenameExtension, conformingTo: nil) == .jpeg)
        #expect(UTType.types(tag: "jpg", tagClass: .filenameExtension, conformingTo: nil).first == .jpeg)
    }

    @Test func unknownExtensionGivesADynamicType() throws {  // 44
        let type = try #require(UTType(filenameExtension: "xyzzy"))
        #expect(type.isDynamic)
        #expect(!type.isDeclared)
        #expect(type.identifier.hasPrefix("dyn.a"))
        #expect(type.conforms(to: .data))
        #expect(type.tags[.filenameExtension] == ["xyzzy"])
        #expect(type.preferredFilenameExtension == "xyzzy")
        #expect(type.localizedDescription == nil)
        // The identifier alone round-trips to the same tag.
        let again = try #require(UTType(type.identifier))
        #expect(again.isDynamic)
        #expect(again.tags[.filenameExtension] == ["xyzzy"])
        #expect(again.conforms(to: .data))
    }

    @Test func exportedBeatsImportedAndRanksOrderHandlers() throws {  // 45
        let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
        let importer = AppManifest(
            bundleIdentifier: "com.example.importer",
            importedTypes: [
                TypeDeclaration(
                    identifier: "com.example.note", conformsTo: ["public.data"],
                    tags: [.filenameExtension: ["note"]], description: "Imported description", origin: .imported,
                    owner: "com.example.importer")
            ],
            documentTypes: [DocumentTypeClaim(rank: .alternate, contentTypes: ["com.example.note"])])
        let owner = AppManifest(
            bundleIdentifier: "com.example.owner",
            exportedTypes: [
                TypeDeclaration(
                    identifier: "com.example.note", conformsTo: ["public.plain-text"],
                    tags: [.filenameExtension: ["note"]], description: "Owner's note", origin: .exported,
                    owner: "com.example.owner")
            ],
            documentTypes: [DocumentTypeClaim(rank: .owner, contentTypes: ["com.example.note"])])
        let viewer = AppManifest(
            bundleIdentifier: "com.example.viewer",
            documentTypes: [DocumentTypeClaim(role: .viewer, rank: .default, contentTypes: ["com.example.note"])])
        let bystander = AppManifest(
            bundleIdentifier: "com.example.bystander",
            documentTypes: [DocumentTypeClaim(rank: .none, contentTypes: ["com.example.note"])])
        // The importer registers first: the exported declaration must still win.
        let handlers = HandlerRegistry(types: registry, paths: nil)
        for app in [importer, bystander, owner, viewer] { try registry.register(app) }
        let note = try #require(registry.type(withIdentifier: "com.example.note"))
        #expect(note.origin == .exported)
        #expect(note.localizedDescription == "Owner's note")
        #expect(note.conforms(to: .plainText))
        #expect(registry.type(tag: "note", tagClass: .filenameExtension) == note)

        let candidates = handlers.candidates(for: note).map(\.bundleIdentifier)
        #expect(candidates == ["com.example.owner", "com.example.viewer", "com.example.importer", "com.example.bystander"])
        #expect(handlers.choice(for: note)?.handler == .app("com.example.owner"))
        #expect(handlers.choice(for: note)?.reason == .rank)

        // Without the owner, Default beats Alternate; None is never chosen even alone.
        registry.unregister(bundleIdentifier: "com.example.owner")
        let imported = try #require(registry.type(withIdentifier: "com.example.note"))
        #expect(imported.origin == .imported)
        #expect(handlers.choice(for: imported)?.handler == .app("com.example.viewer"))
        registry.unregister(bundleIdentifier: "com.example.viewer")
        #expect(handlers.choice(for: imported)?.handler == .app("com.example.importer"))
        registry.unregister(bundleIdentifier: "com.example.importer")
        #expect(handlers.choice(for: try #require(registry.type(withIdentifier: "public.plain-text"))) == nil)
        #expect(handlers.candidates(for: try #require(UTType("public.jpeg"))).isEmpty)
    }
}
