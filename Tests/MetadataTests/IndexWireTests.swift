@testable import Folio
import FolioTestTraits
import Foundation
import Testing

/// Items on the wire between the daemon's index and its clients.
@Suite("Index items on the wire", .elasticPool)
struct IndexWireTests {
    /// A drive item's sync state goes through whole, and the ubiquitous keys come from it.
    @Test func aDriveItemsSyncStateRoundTrips() throws {
        var facts = MetadataFacts(
            path: "/home/u/Drive/plan.txt", name: "plan.txt", kind: .regular, size: 12, modified: 1_700_000_000, typeIdentifier: "public.plain-text",
            tags: [], downloadingStatus: NSMetadataUbiquitousItemDownloadingStatusCurrent)
        facts.sync = UbiquitousSyncState(isUploaded: false, isDownloading: false, isPinned: true, error: "the server answered 507")
        let bytes = IndexWire.encode(facts).serialized()
        let decoded = try #require(IndexWire.decode(try WireValue(parsing: bytes)))
        #expect(decoded == facts)
        #expect(decoded.value(.isUploading) == .bool(true) && decoded.value(.isUploaded) == .bool(false) && decoded.value(.isPinned) == .bool(true))
        #expect(decoded.value(.uploadingError) == .string("the server answered 507") && decoded.value(.downloadingError) == nil)
        // To an app, as Apple's: an `NSError` saying why.
        let error = MetadataItem(facts: decoded).value(forAttribute: NSMetadataUbiquitousItemUploadingErrorKey) as? NSError
        #expect(error?.localizedDescription == "the server answered 507" && error?.domain == NSCocoaErrorDomain)
        #expect(MetadataItem(facts: decoded).value(forAttribute: NSMetadataUbiquitousItemDownloadingErrorKey) == nil)
        // Outside the drive: none of the keys.
        let plain = MetadataFacts(path: "/home/u/notes.txt", name: "notes.txt", kind: .regular, size: 1, modified: 0, tags: [])
        let back = try #require(IndexWire.decode(try WireValue(parsing: IndexWire.encode(plain).serialized())))
        #expect(back.sync == nil && back.value(.isUploaded) == nil && back.value(.isPinned) == nil)
    }

    /// A sync state without its one required field makes the item malformed, not a guess.
    @Test(arguments: [#"{"dl": true}"#, #"{"up": "yes"}"#, #"[]"#])
    func aMalformedSyncStateIsRefused(_ state: String) throws {
        let item = #"{"p": "/d/x.txt", "k": 0, "s": 1, "m": 0, "t": "public.data", "y": "# + state + "}"
        #expect(IndexWire.decode(try WireValue(parsing: Array(item.utf8))) == nil)
    }
}
