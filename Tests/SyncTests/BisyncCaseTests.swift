import Folio
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// rclone bisync's ten change cases (its `test_changes`), between two devices syncing through one
/// server, on every server kind: each outcome keeps every byte the user wrote.
@Suite("Two devices: bisync's change cases", .elasticPool)
struct BisyncCaseTests {
    @Test(arguments: SyncBackend.Kind.allCases.filter(\.runs))
    func theTenChangeCasesKeepEveryByte(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two")
        var ledger = ByteLedger()
        func write(_ device: SyncDevice, _ path: String, _ text: String) throws {
            try device.write(path, text)
            ledger.wrote(text, on: device, at: path)
        }
        func delete(_ device: SyncDevice, _ path: String) throws {
            try device.delete(path)
            ledger.deleted(on: device, at: path)
        }
        // The synced start: file1 … file8 on both.
        for index in 1...8 { try write(one, "file\(index).txt", "file \(index), as both devices first saw it") }
        try write(one, "folder/inner.txt", "inside a folder")
        let pushed = try await one.settle()
        let pulled = try await two.settle()
        try #require(two.tree() == one.tree(), "the second device did not get the first one's files: \(pushed) \(pulled)")

        // Device one (rclone's Path1): new, newer, deleted, changed on both, deleted vs newer, newer vs deleted, deleted on both.
        try write(one, "file11.txt", "new on device one")
        try write(one, "file2.txt", "newer on device one (longer)")
        try delete(one, "file4.txt")
        try write(one, "file5.txt", "changed on device one, differently")
        try delete(one, "file6.txt")
        try write(one, "file7.txt", "newer on device one while device two deleted it")
        try delete(one, "file8.txt")
        // Device two (Path2).
        try write(two, "file10.txt", "new on device two")
        try write(two, "file1.txt", "newer on device two")
        try delete(two, "file3.txt")
        try write(two, "file5.txt", "changed on device two")
        try write(two, "file6.txt", "newer on device two while device one deleted it")
        try delete(two, "file7.txt")
        try delete(two, "file8.txt")

        let second = try await two.sync()
        #expect(second.uploaded == 4 && second.deletedOnServer == 3, "\(second)")
        let first = try await one.sync()
        #expect(first.conflicts == ["file5.txt"], "\(first)")
        let third = try await two.sync()
        #expect(third.conflicts.isEmpty, "\(third)")

        let expected: [String: String] = [
            "file1.txt": "newer on device two",
            "file2.txt": "newer on device one (longer)",
            "file5.txt": "changed on device two",  // the server's content keeps the name …
            "file6.txt": "newer on device two while device one deleted it",  // a modification beats a deletion
            "file7.txt": "newer on device one while device two deleted it",
            "file10.txt": "new on device two",
            "file11.txt": "new on device one",
            "folder/inner.txt": "inside a folder",
        ]
        #expect(one.tree() == expected, "device one: \(one.tree())")
        #expect(two.tree() == expected, "device two: \(two.tree())")
        // … and device one's edit is a conflict version of it.
        #expect(try one.conflicts("file5.txt") == ["changed on device one, differently"])
        // Deleted files the user did not delete are kept as versions where they were removed.
        #expect(two.keeps("file \(4), as both devices first saw it"), "device two lost file4's bytes")
        #expect(one.keeps("file \(3), as both devices first saw it"), "device one lost file3's bytes")
        #expect(one.keeps("file \(1), as both devices first saw it"), "device one lost file1's replaced bytes")
        // Deleted by the users themselves on both sides: gone, as they wanted.
        let lost = ledger.lost(on: [one, two])
        #expect(lost.isEmpty, "bytes lost: \(lost)")

        // Settled: further passes change nothing.
        for device in [one, two, one] {
            let settled = try await device.sync()
            #expect(settled.uploaded + settled.downloaded + settled.deletedHere + settled.deletedOnServer == 0 && settled.conflicts.isEmpty, "\(device.name): \(settled)")
        }
    }
}
