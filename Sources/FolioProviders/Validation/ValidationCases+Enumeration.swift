import Folio
import Foundation

extension ProviderValidation {
    /// Paging, the working set, change enumeration, anchors and their expiry.
    static let enumerationCases: [Case] = [
        Case(name: "paging lists every item once, pages within 500 bytes") { context in
            let folder = try await context.makeFolder("many")
            let count = context.options.pagingItems
            var made: Set<FileProviderItemIdentifier> = []
            for index in 0..<count {
                made.insert(try await context.makeFile(String(format: "item-%04d.txt", index), Data("\(index)".utf8), in: folder.itemIdentifier).itemIdentifier)
            }
            let listed = try await context.list(folder.itemIdentifier)
            let identifiers = listed.map(\.itemIdentifier)
            try expect(Set(identifiers).count == identifiers.count, "the listing repeats items (\(identifiers.count - Set(identifiers).count) twice)")
            try expect(Set(identifiers) == made, "the listing has \(Set(identifiers).count) of \(count) items, \(Set(identifiers).subtracting(made).count) unknown")
        },
        Case(name: "the working set holds new items") { context in
            let file = try await context.makeFile("in-working-set.txt", Data("w".utf8))
            let all = try await context.list(.workingSet)
            try expect(all.contains { $0.itemIdentifier == file.itemIdentifier }, "the working set lacks a new file (\(all.count) items listed)")
        },
        Case(name: "changes since an anchor: created, modified, renamed, deleted") { context in
            let kept = try await context.makeFile("modified.txt", Data("old".utf8))
            let renamed = try await context.makeFile("renamed-from.txt", Data("r".utf8))
            let deleted = try await context.makeFile("deleted.txt", Data("d".utf8))
            let start = try await context.provider.currentSyncAnchor(for: .workingSet, request: context.request)
            try expect(start.rawValue.count <= FileProviderSyncAnchor.maximumLength, "the anchor is \(start.rawValue.count) bytes, over 500")
            let created = try await context.makeFile("created.txt", Data("new".utf8))
            _ = try await context.write(Data("new content".utf8), to: kept, base: kept.itemVersion)
            let moved = try await context.move(renamed, to: "renamed-to.txt")
            try await context.provider.deleteItem(identifier: deleted.itemIdentifier, baseVersion: deleted.itemVersion, options: [], request: context.request)
            let (updated, removed, end) = try await changes(context, from: start)
            try expect(end != start, "the anchor did not move although items changed")
            try expect(updated[created.itemIdentifier]?.filename == "created.txt", "the created file is not among the changes")
            try expect(updated[kept.itemIdentifier]?.itemVersion.contentVersion != kept.itemVersion.contentVersion, "the modification is not among the changes")
            try expect(updated[moved.itemIdentifier]?.filename == "renamed-to.txt", "the rename is not among the changes")
            try expect(removed.contains(deleted.itemIdentifier), "the deletion is not among the changes")
            let (moreUpdated, moreRemoved, again) = try await changes(context, from: end)
            try expect(moreUpdated.isEmpty && moreRemoved.isEmpty, "changes repeat after the new anchor: \(moreUpdated.count) updated, \(moreRemoved.count) deleted")
            try expect(again == end, "the anchor moved although nothing changed")
        },
        Case(name: "an unknown or mangled anchor is expired") { context in
            try await context.expectError(.syncAnchorExpired, "changes from a mangled anchor") {
                try await context.provider.enumerateChanges(
                    in: .workingSet, from: FileProviderSyncAnchor(Data("folio-validation-mangled".utf8)), request: context.request)
            }
            try await context.expectError(.syncAnchorExpired, "changes from an anchor over 500 bytes") {
                try await context.provider.enumerateChanges(in: .workingSet, from: FileProviderSyncAnchor(Data(count: 600)), request: context.request)
            }
        },
        Case(name: "a mangled page is expired") { context in
            try await context.expectError(.pageExpired, "a listing from a mangled page") {
                try await context.provider.enumerateItems(in: context.scratch, startingAt: FileProviderPage(Data(count: 600)), request: context.request)
            }
        },
    ]

    /// Every change since `anchor`, following `moreComing`, keyed by identifier.
    static func changes(_ context: ValidationContext, from anchor: FileProviderSyncAnchor) async throws -> (
        [FileProviderItemIdentifier: FileProviderItemRecord], Set<FileProviderItemIdentifier>, FileProviderSyncAnchor
    ) {
        var updated: [FileProviderItemIdentifier: FileProviderItemRecord] = [:]
        var removed: Set<FileProviderItemIdentifier> = []
        var current = anchor
        for _ in 0..<10_000 {
            let batch = try await context.provider.enumerateChanges(in: .workingSet, from: current, request: context.request)
            try expect(batch.anchor.rawValue.count <= FileProviderSyncAnchor.maximumLength, "an anchor is over 500 bytes")
            for item in batch.updatedItems { updated[item.itemIdentifier] = FileProviderItemRecord(item) }
            for identifier in batch.deletedItemIdentifiers {
                updated[identifier] = nil
                removed.insert(identifier)
            }
            if batch.moreComing {
                try expect(batch.anchor != current, "moreComing with an anchor that did not move")
            }
            current = batch.anchor
            if !batch.moreComing { return (updated, removed, current) }
        }
        throw ValidationFailure(message: "the change enumeration did not end")
    }
}
