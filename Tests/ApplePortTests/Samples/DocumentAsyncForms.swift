// Not a sample: `await` on each of `UIDocument`'s methods with a completion handler must pick
// its async form, as in Apple's SDK, whether the result is used or not. Were the handler form
// (whose handler defaults to nil) chosen, nothing would be awaited: the document would still be
// opening, saving or closing on its own queue when the next line runs.
import Folio
import FolioTestTraits
import Foundation
import Testing

@Suite("Document: await picks the async forms", .elasticPool)
struct DocumentAsyncFormsTests {
    @Test func awaitedCallsAreFinishedOnTheNextLine() async throws {
        let world = try PortWorld("async-forms")
        try await world.run {
            let url = world.url("Draft.txt")
            let document = TextDocument(fileURL: url)
            document.text = "one"
            let created: Bool = await document.save(to: url, for: .forCreating)
            #expect(created && FileManager.default.fileExists(atPath: url.path))
            await document.close()
            #expect(document.documentState.contains(.closed))

            await document.open()
            #expect(!document.documentState.contains(.closed) && document.text == "one")
            document.text = "two"
            document.updateChangeCount(.done)
            await document.autosave()
            let saved = try String(contentsOf: url, encoding: .utf8)
            #expect(!document.hasUnsavedChanges && saved == "two")
            try Data("three".utf8).write(to: url)
            await document.revert(toContentsOf: url)
            #expect(document.text == "three")
            await document.save(to: url, for: .forOverwriting)
            let closed = await document.close()
            #expect(closed && document.documentState.contains(.closed))
        }
    }
}
