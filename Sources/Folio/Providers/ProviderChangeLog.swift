import Foundation

/// A provider's numbered history of changes, for providers that keep their own (the local folder and
/// the in-memory provider): every change gets the next generation, an anchor is the epoch and a
/// generation, and changes since an anchor are the items whose last change came later.
///
/// An anchor from another epoch (an earlier process, a reset) or from before ``floor`` is expired.
package struct ProviderChangeLog: Sendable {
    /// This history's random epoch: anchors of another are expired.
    package let epoch: String
    /// The newest generation.
    package private(set) var generation: UInt64 = 0
    /// Anchors at or after this generation are still answerable.
    package private(set) var floor: UInt64 = 0
    private var last: [FileProviderItemIdentifier: (generation: UInt64, deleted: Bool)] = [:]

    /// A new, empty history.
    package init(epoch: String = UUID().uuidString.lowercased()) {
        self.epoch = epoch
    }

    /// Records that `identifier` was created or changed.
    package mutating func recordUpdate(_ identifier: FileProviderItemIdentifier) {
        generation += 1
        last[identifier] = (generation, false)
    }

    /// Records that `identifier` was deleted.
    package mutating func recordDeletion(_ identifier: FileProviderItemIdentifier) {
        generation += 1
        last[identifier] = (generation, true)
    }

    /// Makes every anchor handed out so far expired.
    package mutating func expireAnchors() {
        floor = generation
        last = [:]
    }

    /// The anchor of the current state.
    package var anchor: FileProviderSyncAnchor { anchor(at: generation) }

    private func anchor(at generation: UInt64) -> FileProviderSyncAnchor {
        FileProviderSyncAnchor(Data("folio1:\(epoch):\(generation)".utf8))
    }

    /// The generation `anchor` stands for, or nil when it is expired or not this history's.
    package func generation(of anchor: FileProviderSyncAnchor) -> UInt64? {
        guard anchor.rawValue.count <= FileProviderSyncAnchor.maximumLength,
            let text = String(data: anchor.rawValue, encoding: .utf8)
        else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "folio1", parts[1] == epoch, let number = UInt64(parts[2]),
            number >= floor, number <= generation
        else { return nil }
        return number
    }

    /// The items changed and deleted since `anchor`, at most `limit` of them in order of change, with
    /// the anchor after them and whether more are waiting.
    ///
    /// - Throws: ``FileProviderError/Code/syncAnchorExpired`` for an anchor this history cannot answer.
    package func changes(since anchor: FileProviderSyncAnchor, limit: Int = 1000) throws(FileProviderError) -> (
        updated: [FileProviderItemIdentifier], deleted: [FileProviderItemIdentifier], anchor: FileProviderSyncAnchor, moreComing: Bool
    ) {
        guard let start = generation(of: anchor) else {
            throw FileProviderError(.syncAnchorExpired, message: "the sync anchor is expired or not this provider's")
        }
        let pending = last.filter { $0.value.generation > start }.sorted { $0.value.generation < $1.value.generation }
        let taken = pending.prefix(limit)
        let end = taken.last?.value.generation ?? start
        return (
            taken.filter { !$0.value.deleted }.map(\.key), taken.filter(\.value.deleted).map(\.key), self.anchor(at: end),
            pending.count > taken.count
        )
    }
}
