/// What a sync pass did.
struct SyncReport: Sendable, Equatable {
    var uploaded = 0
    var downloaded = 0
    var deletedOnServer = 0
    var deletedHere = 0
    /// Paths both sides changed to the same content.
    var converged = 0
    /// Paths both sides changed differently: the server's content has the name, the local one is
    /// a conflict version.
    var conflicts: [String] = []
    /// Deletions held back by the mass-deletion guard (run again with deletions confirmed).
    var heldDeletions = 0
    /// Whether the pass merged (first sync, reset journal, restored or replaced server): no deletions.
    var merged = false
    /// Paths that were not synced this time, with the reason (they are tried again next pass).
    var deferred: [String: String] = [:]
    /// Items left out of the listing (names no file system here can hold, duplicates).
    var skipped: [String] = []
}
