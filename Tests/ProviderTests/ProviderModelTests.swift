import Folio
import Foundation
import Testing
import FolioTestTraits

/// A provider's own item type, implementing only the required properties (as an app's would).
private struct MinimalItem: FileProviderItem {
    var itemIdentifier: FileProviderItemIdentifier
    var parentItemIdentifier: FileProviderItemIdentifier
    var filename: String
}

@Suite("The provider model", .elasticPool)
struct ProviderModelTests {
    @Test func errorCodesAreApples() throws {
        let expected: [FileProviderError.Code: Int] = [
            .notAuthenticated: -1000, .filenameCollision: -1001, .syncAnchorExpired: -1002, .insufficientQuota: -1003,
            .serverUnreachable: -1004, .noSuchItem: -1005, .deletionRejected: -1006, .directoryNotEmpty: -1007, .providerNotFound: -2001,
            .cannotSynchronize: -2005, .nonEvictableChildren: -2006, .unsyncedEdits: -2007, .nonEvictable: -2008,
            .versionNoLongerAvailable: -2009, .excludedFromSync: -2010, .applicationExtensionNotFound: -2014,
            .localVersionConflictingWithServer: -2015,
        ]
        for (code, number) in expected { #expect(code.rawValue == number, "\(code)") }
        #expect(FileProviderError.Code.pageExpired == .syncAnchorExpired)
        let error = FileProviderError.collision(with: FileProviderItemIdentifier("x"))
        let bridged = error as NSError
        #expect(bridged.domain == "NSFileProviderErrorDomain")
        #expect(bridged.code == -1001)
        #expect(bridged.userInfo["NSFileProviderErrorCollidingItem"] as? String == "x")
        #expect(FileProviderModifyItemOptions.failOnConflict.rawValue == 1 << 1)
        // Apple's way of making them: NSError's class methods, with the item in the user info; a
        // provider program's NSError of the domain reaches the engine as the provider error it is.
        let existing = MinimalItem(itemIdentifier: FileProviderItemIdentifier("there"), parentItemIdentifier: .rootContainer, filename: "a.txt")
        let collision = NSError.fileProviderErrorForCollision(with: existing)
        #expect(collision.domain == NSFileProviderErrorDomain && collision.code == FileProviderError.Code.filenameCollision.rawValue)
        #expect((collision.userInfo[NSFileProviderErrorItemKey] as? any FileProviderItem)?.filename == "a.txt")
        #expect((collision.userInfo[NSFileProviderErrorCollidingItemKey] as? any FileProviderItem)?.itemIdentifier == existing.itemIdentifier)
        let read = try #require(ProviderWire.error(ProviderWire.encode(collision), context: "test") as? FileProviderError)
        #expect(read.code == .filenameCollision && read.collidingItemIdentifier == existing.itemIdentifier && read.reaction == .bounce)
        #expect(FileProviderError(bridging: collision)?.collidingItem?.filename == "a.txt")
        let missing = NSError.fileProviderErrorForNonExistentItem(withIdentifier: FileProviderItemIdentifier("gone"))
        #expect(missing.code == -1005 && missing.userInfo[NSFileProviderErrorNonExistentItemIdentifierKey] as? String == "gone")
        #expect(FileProviderError(bridging: missing)?.nonExistentItemIdentifier == FileProviderItemIdentifier("gone"))
        #expect((ProviderWire.error(ProviderWire.encode(missing), context: "test") as? FileProviderError)?.reaction == .confirmAbsence)
        // Built by hand, with Apple's keys: read the same way; another domain is not a provider error.
        let byHand = NSError(domain: NSFileProviderErrorDomain, code: -1001, userInfo: [NSFileProviderErrorCollidingItemKey: "other"])
        #expect(FileProviderError(bridging: byHand)?.collidingItemIdentifier == FileProviderItemIdentifier("other"))
        #expect(FileProviderError(bridging: CocoaError(.fileNoSuchFile)) == nil)
        #expect(FileProviderError(bridging: NSError(domain: NSFileProviderErrorDomain, code: 12345)) == nil)
        // -3001, Folio's code before Apple defined -2015, is still read from provider programs.
        let legacy = ProviderWire.error(["domain": "NSFileProviderErrorDomain", "code": -3001, "message": "changed"], context: "test")
        #expect((legacy as? FileProviderError)?.code == .localVersionConflictingWithServer)
    }

    @Test func systemReactionsFollowApple() {
        #expect(FileProviderError(.filenameCollision).reaction == .bounce)
        #expect(FileProviderError(.noSuchItem).reaction == .confirmAbsence)
        #expect(FileProviderError(.serverUnreachable).reaction == .backOff)
        #expect(FileProviderError(.notAuthenticated).reaction == .backOff)
        #expect(FileProviderError(.insufficientQuota).reaction == .backOff)
        #expect(FileProviderError(.syncAnchorExpired).reaction == .enumerateAgain)
        #expect(FileProviderError(.deletionRejected).reaction == .recreate)
        #expect(FileProviderError(.localVersionConflictingWithServer).reaction == .keepBoth)
        #expect(FileProviderError(.excludedFromSync).reaction == .exclude)
        #expect(FileProviderError(.cannotSynchronize).reaction == .stop)
    }

    @Test func capabilityAndFieldBitsAreApples() {
        #expect(FileProviderItemCapabilities.allowsEvicting.rawValue == 64)
        #expect(FileProviderItemCapabilities.allowsExcludingFromSync.rawValue == 128)
        #expect(FileProviderItemCapabilities.allowsContentEnumerating == .allowsReading)
        #expect(FileProviderItemFields.contentModificationDate.rawValue == 128)
        #expect(FileProviderItemFields.extendedAttributes.rawValue == 512)
        #expect(FileProviderItemFields.typeAndCreator.rawValue == 1024)
    }

    @Test func anItemTypeNeedsOnlyTheRequiredProperties() {
        let item = MinimalItem(itemIdentifier: FileProviderItemIdentifier("a"), parentItemIdentifier: .rootContainer, filename: "a.txt")
        let record = FileProviderItemRecord(item)
        #expect(record.filename == "a.txt")
        #expect(record.contentType == .data)
        #expect(record.capabilities == .allowsAll)
        #expect(record.itemVersion == FileProviderItemVersion())
        #expect(record.size == nil)
        let encoded = try? JSONEncoder().encode(record)
        #expect(encoded.flatMap { try? JSONDecoder().decode(FileProviderItemRecord.self, from: $0) } == record)
    }

    @Test func changeLogAnchorsBatchesAndExpiry() throws {
        var log = ProviderChangeLog()
        let start = log.anchor
        for index in 0..<5 { log.recordUpdate(FileProviderItemIdentifier("i\(index)")) }
        log.recordDeletion(FileProviderItemIdentifier("i1"))
        let first = try log.changes(since: start, limit: 3)
        #expect(first.moreComing)
        #expect(first.updated.count == 3)
        let rest = try log.changes(since: first.anchor, limit: 10)
        #expect(!rest.moreComing)
        #expect(rest.deleted == [FileProviderItemIdentifier("i1")])
        #expect(Set(first.updated + rest.updated) == Set(["i0", "i2", "i3", "i4"].map { FileProviderItemIdentifier($0) }))
        let none = try log.changes(since: rest.anchor)
        #expect(none.updated.isEmpty && none.deleted.isEmpty && none.anchor == rest.anchor && !none.moreComing)
        // Another process's history, a mangled anchor, and anchors from before an expiry are all expired.
        #expect(throws: FileProviderError.self) { try ProviderChangeLog().changes(since: rest.anchor) }
        #expect(throws: FileProviderError.self) { try log.changes(since: FileProviderSyncAnchor(Data("folio1:x:1".utf8))) }
        log.expireAnchors()
        let error = #expect(throws: FileProviderError.self) { try log.changes(since: start) }
        #expect(error?.code == .syncAnchorExpired)
        #expect(try log.changes(since: log.anchor).updated.isEmpty)
    }

    @Test func pagesContinueAfterTheirKeyWhateverChangesMeanwhile() throws {
        var names = ProviderPaging.sorted((0..<25).map { "n\($0)" }, key: { $0 })
        let first = try ProviderPaging.slice(names, key: { $0 }, after: .initialPageSortedByName, limit: 10)
        #expect(first.items.count == 10)
        let next = try #require(first.next)
        // An item before the page's key is added and one after it removed: nothing is skipped or repeated.
        names.insert("a-new-first", at: 0)
        names.removeAll { $0 == "n9" }
        var seen = Array(first.items)
        var page: FileProviderPage? = next
        while let current = page {
            let slice = try ProviderPaging.slice(names, key: { $0 }, after: current, limit: 10)
            seen += slice.items
            page = slice.next
        }
        #expect(seen.count == Set(seen).count)
        #expect(Set(seen).isSuperset(of: Set(names).subtracting(["a-new-first"])))
        #expect(throws: FileProviderError.self) { try ProviderPaging.key(of: FileProviderPage(Data("bogus".utf8))) }
    }

    @Test func pagesSortByBytesNotByUnicode() {
        // NFD "é" (65 CC 81) before "f" before NFC "é" (C3 A9); a prefix before what extends it.
        let sorted = ProviderPaging.sorted(["\u{E9}", "f", "e\u{301}", "", "ab", "a"], key: { $0 })
        #expect(sorted.map { Array($0.utf8) } == [[], [0x61], [0x61, 0x62], [0x65, 0xCC, 0x81], [0x66], [0xC3, 0xA9]])
    }

    @Test func illegalNamesAreRefused() {
        for name in ["", ".", "..", "a/b", "a\u{0}b", String(repeating: "x", count: 256)] {
            #expect(throws: CocoaError.self, "\(name.debugDescription)") { try FileProviderFilename.validate(name) }
        }
        for name in ["...", ".hidden", "a b", String(repeating: "é", count: 127), "tab\tname"] {
            #expect(throws: Never.self) { try FileProviderFilename.validate(name) }
        }
    }
}
