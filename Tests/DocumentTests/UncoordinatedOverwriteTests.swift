@testable import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

/// Beyond Apple (the seeds' data-loss diagram): a writer that does not coordinate cannot destroy the
/// only copy of a saved document; the content the document knew stays recoverable as a FileVersion.
@Suite("Document: uncoordinated overwrites lose nothing", .elasticPool)
struct UncoordinatedOverwriteTests {
    @Test func plainOverwriteKeepsThePriorContents() async throws {
        let world = try DocumentWorld()
        let url = try world.file("thesis.txt", "chapter one")
        let document = world.document(url)
        #expect(await document.open())
        document.edit("chapter one, revised")
        #expect(await document.autosave())

        // `echo oops > thesis.txt`
        try Data("oops\n".utf8).write(to: url)
        #expect(await eventually(5) { document.text == "oops\n" }, "the document reloads what is on disk")
        let kept = try world.versions(url).filter { $0.record?.kind == .external }
        #expect(try kept.map { try String(contentsOf: $0.url, encoding: .utf8) } == ["chapter one, revised"])
        try kept[0].replaceItem(at: url)
        #expect(try String(contentsOf: url, encoding: .utf8) == "chapter one, revised")
    }

    @Test func editorSaveByRenameKeepsThePriorContentsAndIdentity() async throws {
        let world = try DocumentWorld()
        let url = try world.file("notes.md", "# Notes\nsaved")
        let document = world.document(url)
        #expect(await document.open())
        let identity = try DocumentIdentity.identifier(ofItemAt: url.path, creating: false)

        // An editor writes a new file and renames it over the document, attributes not kept.
        let temporary = world.url(".notes.md.swp")
        try Data("# Notes\nrewritten elsewhere".utf8).write(to: temporary)
        #expect(rename(temporary.path, url.path) == 0)
        #expect(await eventually(5) { document.text == "# Notes\nrewritten elsewhere" })
        #expect(try DocumentIdentity.identifier(ofItemAt: url.path, creating: false) == identity, "the identity was restored")
        let kept = try world.versions(url).filter { $0.record?.kind == .external }
        #expect(try kept.map { try String(contentsOf: $0.url, encoding: .utf8) } == ["# Notes\nsaved"])
    }

    @Test func unsavedEditsAndAnExternalChangeAreBothKept() async throws {
        let world = try DocumentWorld()
        let url = try world.file("todo.txt", "buy milk")
        let document = world.document(url)
        #expect(await document.open())
        document.edit("buy milk and bread")
        try Data("call mum".utf8).write(to: url)
        #expect(await eventually(5) { document.documentState.contains(.inConflict) })
        #expect(document.text == "buy milk and bread", "unsaved edits survive")
        #expect(await eventually(5) { !document.hasUnsavedChanges }, "the document saved its edits at once")
        let versions = try world.versions(url)
        #expect(try versions.filter(\.isConflict).map { try String(contentsOf: $0.url, encoding: .utf8) } == ["call mum"])
        #expect(try versions.filter { $0.record?.kind == .external }.map { try String(contentsOf: $0.url, encoding: .utf8) } == ["buy milk"])
        #expect(try String(contentsOf: url, encoding: .utf8) == "buy milk and bread")
    }
}
