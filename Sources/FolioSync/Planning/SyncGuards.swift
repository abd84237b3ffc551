/// The mass-deletion guard: a pass that would delete more than `maximumCount` items, or more than
/// `maximumFraction` of what was synced (at least `minimumCount`), deletes nothing until the user
/// confirms; everything else in the pass goes ahead. An emptied server, a wiped folder or a broken
/// listing looks like this, and then the deletions would be the data loss.
struct SyncGuards: Sendable {
    var maximumCount = 100
    var maximumFraction = 0.5
    var minimumCount = 3

    /// `actions` split into those to run and the deletions held back.
    func split(_ actions: [SyncAction], syncedCount: Int, confirmed: Bool) -> (run: [SyncAction], held: [SyncAction]) {
        let deletions = actions.filter(\.isDeletion)
        guard !confirmed, !deletions.isEmpty else { return (actions, []) }
        let tooMany = deletions.count > maximumCount
        let tooLarge = deletions.count >= minimumCount && Double(deletions.count) > maximumFraction * Double(max(syncedCount, 1))
        guard tooMany || tooLarge else { return (actions, []) }
        return (actions.filter { !$0.isDeletion }, deletions)
    }
}
