#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import Foundation
import Logging
import UniformTypes

/// Syncs one domain's local replica folder with its provider, a pass at a time: list the server,
/// scan the folder, plan against the journal's base (``SyncPlanner``), hold mass deletions
/// (``SyncGuards``), then create folders, move contents, delete, and record each new base.
///
/// Nothing un-uploaded is ever forgotten: a local change stays a change (its hash differs from the
/// base) until an upload of it succeeds, so a crash, a failed request or a stopped server only
/// defers it to the next pass. Every upload of a small file sends a private snapshot of it (a copy
/// in the staging folder), so a writer working during the upload cannot tear what is sent; a
/// large one is sent from where it is, and not taken for any version if it changed meanwhile. Every local
/// file the engine replaces or deletes is kept as a version first.
actor SyncEngine {
    let provider: any FileProvider
    let replica: LocalReplica
    let journal: SyncJournal
    let versions: VersionStore
    let guards: SyncGuards
    /// Transfers run at once.
    let concurrency: Int
    /// Transfers run at once unless told otherwise: as many as rclone's tuned `--transfers` and as
    /// the HTTP client's connections to one server (``HTTPTransfer``), so small files keep every
    /// connection busy while each waits for its reply.
    static let defaultConcurrency = 16
    let logger: Logger
    /// Transfers whose outcome no base records yet, by path (``UnfinishedTransfer``): each is in
    /// the journal before its effect (read from it by the first pass), so a restarted daemon still
    /// knows the server's content, or the placed file, for this device's own.
    var unfinished: [SyncPath: UnfinishedTransfer] = [:]
    /// What the journal and its note log hold of them (nil until the first pass reads them).
    private var journaledUnfinished: [SyncPath: UnfinishedTransfer]?
    /// Where the notes of unfinished transfers go during a pass, from the file work each comes
    /// before; the pass's end moves them into the journal.
    let notes: UnfinishedNoteLog
    /// The files small uploads' snapshots are copied into.
    let stagingSlots: StagingSlots
    /// What the passes and downloads are doing now, for progress shown to people.
    let board = SyncProgressBoard()
    /// The pass running now, as a download beside it sees it (``materializeBesidePass(_:progress:arriving:)``).
    var passStage = PassStage.idle
    /// The paths of each download running beside the pass, and the pass's end waiting for them.
    var besidePass: [[SyncPath]] = []
    var besidePassEnded: [CheckedContinuation<Void, Never>] = []

    init(
        provider: any FileProvider, replica: LocalReplica, journal: SyncJournal, versions: VersionStore, guards: SyncGuards = SyncGuards(),
        concurrency: Int = SyncEngine.defaultConcurrency, logger: Logger = Logger(label: "folio.sync")
    ) {
        self.provider = provider
        self.replica = replica
        self.journal = journal
        notes = UnfinishedNoteLog(path: journal.noteLogPath)
        self.versions = versions
        self.guards = guards
        self.concurrency = concurrency
        self.logger = logger
        stagingSlots = StagingSlots(folder: replica.staging)
    }

    /// One pass. With `confirmingDeletions`, deletions held by the guard go ahead; with
    /// `retryingSetAside`, actions set aside after failing pass after pass are tried again now.
    /// - Throws: ``SyncStop`` when the pass changed nothing because something must be looked at;
    ///   a provider error when the server could not be listed.
    func sync(confirmingDeletions: Bool = false, retryingSetAside: Bool = false) async throws -> SyncReport {
        passStage = .planning
        let outcome: Result<SyncReport, any Error>
        do { outcome = .success(try await pass(confirmingDeletions: confirmingDeletions, retryingSetAside: retryingSetAside)) } catch { outcome = .failure(error) }
        await endPassStage()
        return try outcome.get()
    }

    private func pass(confirmingDeletions: Bool, retryingSetAside: Bool) async throws -> SyncReport {
        let known = try await journal.marker()
        try checkReplica(syncedBefore: known != nil)
        let token = replicaToken()
        // A replica put back from an earlier copy: its files are not changes made since the base.
        let restoredReplica = known?.replicaToken != nil && token != known?.replicaToken
        let request = try await SyncFileWork.run { [replica] in try replica.makeStaging() }
        defer {
            stagingSlots.removeFree()
            board.endPass()
        }
        let clock = ContinuousClock()
        var phase = clock.now
        func lap(_ name: String) {
            logger.debug("sync phase", metadata: ["phase": "\(name)", "duration": "\(clock.now - phase)"])
            phase = clock.now
        }
        // The server is listed while the journal is read and the replica scanned here: neither
        // needs the other (a no-change pass of 10,000 files waited 45 ms for them after its listing).
        async let listing = RemoteTree.list(provider, request: request, logger: logger)
        let base = try await journal.base()
        if journaledUnfinished == nil {
            var journaled = try await journal.unfinishedTransfers()
            // Notes a pass killed midway left in the log join the journal first (not one whose
            // transfer's base was recorded since: the base then has the note's fingerprint).
            let logged = try await SyncFileWork.run { [notes] in try UnfinishedNoteLog.read(notes.path) }
            if !logged.isEmpty {
                for (path, transfer) in logged where base[path]?.fingerprint != transfer.fingerprint { journaled[path] = transfer }
                try await journal.setUnfinished(journaled)
                try await SyncFileWork.run { [notes] in try notes.empty() }
            }
            unfinished.merge(journaled) { current, _ in current }
            journaledUnfinished = journaled
        }
        let scan = try await SyncFileWork.run { [replica] in try replica.scan(base: base) }
        lap("read the journal and scan the replica")
        let tree = try await listing
        lap("list the server")
        var report = SyncReport()
        report.skipped = tree.skipped

        // The server's marker: a first sync writes it; a changed epoch or an older generation means
        // the server was replaced or restored, and the pass merges.
        var marker: DriveMarker
        var writesNewMarker = false
        if let record = tree.marker {
            marker = try await readMarker(record, request: request)
            report.merged = known == nil || known?.epoch != marker.epoch || marker.generation < known!.generation
            if let known, known.epoch == marker.epoch, marker.generation < known.generation {
                // A restored server: its history forked from what the devices saw. A new epoch
                // makes every other device merge too (counting on from the old generation could
                // reach one a device already knows, and it would trust its base).
                logger.notice("the server went back to an earlier state: merging", metadata: ["generation": "\(marker.generation)", "known": "\(known.generation)"])
                marker = DriveMarker(epoch: UUID().uuidString.lowercased(), generation: 0)
                writesNewMarker = true
            }
        } else {
            guard known == nil else { throw SyncStop.remoteMarkerMissing }
            // A first sync: the marker is written at the end of the pass (a pass that dies before
            // then is a first sync again, which merges).
            marker = DriveMarker(epoch: UUID().uuidString.lowercased(), generation: 0)
            writesNewMarker = true
            report.merged = true
        }

        if restoredReplica {
            logger.notice("the replica was put back from an earlier copy: merging", metadata: ["replica": "\(replica.root)"])
            report.merged = true
        }
        lap("read the marker")
        let pins = try await journal.pins()
        let planned = SyncPlanner.plan(
            local: scan.entries, remote: tree.entries, base: base, unreadable: scan.unreadable, merging: report.merged,
            localMatchesBase: scan.matchesBase, keepsLocal: { path in pins.contains { path.isWithin($0) } })
        lap("plan")
        let (wanted, held) = guards.split(planned, syncedCount: base.count, confirmed: confirmingDeletions)
        report.heldDeletions = held.count
        // Actions that failed pass after pass wait, unless the item changed (another digest).
        let failures = try await journal.errors()
        let now = Date()
        var actions: [SyncAction] = []
        for action in wanted {
            if !retryingSetAside, let failure = failures[action.path], failure.setsAside(Self.digest(action, scan), now: now) {
                report.setAside[action.path.text] = failure.description
            } else {
                actions.append(action)
            }
        }
        passStage = .running(touching: actions.flatMap(\.paths))
        if !held.isEmpty {
            logger.warning("deletions held by the mass-deletion guard", metadata: ["count": "\(held.count)", "synced": "\(base.count)"])
        }
        board.beginPass(actions: actions.count, bytes: actions.reduce(0) { $0 + Self.transferSize($1, scan) })
        var run = Run(tree: tree, scan: scan, base: base, request: request)
        var changes: [(SyncPath, BaseEntry?)] = []
        // Whether any base changed this pass (`changes` is emptied as it is recorded along the way).
        var changedBases = false
        var serverChanged = false

        // Folders and moves first (parents before children, a move before the creations at its
        // depth), then contents, then deletions (children first).
        for action in actions.filter(\.isFolderCreation).sorted(by: { ($0.path.depth, $0.isMove ? 0 : 1) < ($1.path.depth, $1.isMove ? 0 : 1) }) {
            let outcome = await perform(action, run)
            apply(outcome, action, &report, &changes, &serverChanged, &run)
        }
        let transfers = actions.filter { !$0.isFolderCreation && !$0.isDeletion }
        // Each folder's transfers not yet ended: uploads are settled by whole folders, so that no
        // folder is listed while its files are still being sent (and listed again after). Counted
        // as they end: the unsettled uploads by folder, and those in folders whose transfers ended.
        var transfersLeft = Dictionary(transfers.map { ($0.path.parent, 1) }, uniquingKeysWith: +)
        var unsettledIn: [SyncPath?: Int] = [:]
        var settleable = 0
        var flushed = ContinuousClock.now
        await performConcurrently(transfers, run) { action, outcome in
            apply(outcome, action, &report, &changes, &serverChanged, &run)
            let folder = action.path.parent
            if run.unsettled[action.path] != nil { unsettledIn[folder, default: 0] += 1 }
            transfersLeft[folder, default: 1] -= 1
            if transfersLeft[folder] == 0 { settleable += unsettledIn[folder] ?? 0 }
            // Progress is recorded as it goes, so a pass killed midway redoes little (uploads
            // settled by the 500 or so, each folder's listing serving many; by the 2,000 whatever
            // their folders, when one folder holds that many).
            if settleable >= 500 || run.unsettled.count >= 2000 {
                let settling = settleable >= 500 ? run.unsettled.filter { transfersLeft[$0.key.parent, default: 0] == 0 } : run.unsettled
                changes += await settleVersions(settling, listedCounts: run.itemsByFolder(), request: request)
                for path in settling.keys {
                    run.unsettled[path] = nil
                    unsettledIn[path.parent] = nil
                }
                settleable = 0
            }
            if changes.count >= 500 || ContinuousClock.now - flushed > .seconds(2) {
                if (try? await record(changes, &run)) != nil {
                    changedBases = changedBases || !changes.isEmpty
                    changes.removeAll()
                }
                flushed = .now
            }
        }
        if !run.unsettled.isEmpty {
            changes += await settleVersions(run.unsettled, listedCounts: run.itemsByFolder(), request: request)
            run.unsettled = [:]
        }
        for action in actions.filter(\.isDeletion).sorted(by: { $0.path.depth > $1.path.depth }) {
            let outcome = await perform(action, run)
            apply(outcome, action, &report, &changes, &serverChanged, &run)
        }

        for path in scan.shadowedStubs { replica.removeStub(path) }
        if await shareConflicts(run.keptConflicts, &run) { serverChanged = true }
        report.resolvedConflicts = await settleSharedConflicts(run, merging: report.merged)
        report.sharedConflicts = await importConflicts(run)
        lap("run \(actions.count) actions")
        if serverChanged || writesNewMarker {
            marker.generation += 1
            do {
                run.tree.marker = try await writeMarker(marker, tree: &run.tree, request: request)
            } catch where !writesNewMarker {
                // Another device moved the generation first: it is at least as new as this pass.
                marker.generation -= 1
            }
        }
        // A new token in the replica's marker whenever the pass changed what is synced (first in
        // the folder, then in the journal: a crash between the two makes the next pass a merge).
        var newToken = token
        if changedBases || !changes.isEmpty || token == nil || restoredReplica {
            newToken = UUID().uuidString.lowercased()
            try writeReplicaMarker(token: newToken!)
        }
        // An unfinished transfer matters while its file is here (until a base records the path).
        unfinished = unfinished.filter { replica.fingerprint($0.key) != nil }
        try await flushPlaced(&run)
        // The pass's notes move from their log into the journal.
        let logged = try await SyncFileWork.run { [notes] in notes.holdsNotes }
        try await journal.record(
            changes, marker: SyncJournal.MarkerState(epoch: marker.epoch, generation: marker.generation, replicaToken: newToken),
            unfinished: unfinished == journaledUnfinished && !logged ? nil : unfinished)
        journaledUnfinished = unfinished
        if logged { try await SyncFileWork.run { [notes] in try notes.empty() } }
        var failed: [SyncPath: (reason: String, action: String?)] = [:]
        for action in actions {
            guard failed[action.path] == nil, let reason = report.deferred[action.path.text] else { continue }
            failed[action.path] = (reason, run.refused.contains(action.path) ? Self.digest(action, scan) : nil)
        }
        try await journal.recordErrors(failed: failed, kept: Set(report.setAside.keys.map(SyncPath.init)), now: now)
        lap("record")
        return report
    }

    /// What identifies an action tried on an item as it was: the action (with the server's entry
    /// and the base it was planned from) and the local item (its fingerprint), digested. A change
    /// on either side makes another digest, so a set-aside item is tried again once it changes.
    static func digest(_ action: SyncAction, _ scan: LocalReplica.Scan) -> String {
        let text = describe(action) + "\n" + (scan.entries[action.path].map(describe) ?? "-")
        return ContentDigest.sha256(of: Data(text.utf8))
    }

    /// Every stored field of `value`, nested, with bytes (versions) in hexadecimal: a `Data`'s own
    /// description is only its length, which would hide a changed version.
    private static func describe(_ value: Any) -> String {
        if let data = value as? Data { return data.hexadecimal }
        let mirror = Mirror(reflecting: value)
        guard !mirror.children.isEmpty else { return "\(value)" }
        if mirror.displayStyle == .optional { return mirror.children.first.map { describe($0.value) } ?? "nil" }
        return "\(mirror.subjectType)(" + mirror.children.map { ($0.label ?? "") + ":" + describe($0.value) }.joined(separator: ",") + ")"
    }

    /// Makes the next pass a merge: the journal is forgotten and the replica marked again, so both
    /// sides' items are kept (the same contents match, different ones are both kept) and nothing is
    /// deleted. The way out of ``SyncStop/replicaMarkerMissing`` and ``SyncStop/remoteMarkerMissing``.
    func repair() async throws {
        try await journal.reset()
        try checkReplica(syncedBefore: false)
    }

    /// Records `changes` in the journal once the folders the pass placed items in are on disk.
    func record(_ changes: [(SyncPath, BaseEntry?)], _ run: inout Run) async throws {
        try await flushPlaced(&run)
        try await journal.record(changes)
    }

    /// Flushes the folders in which the pass placed, replaced or renamed items (`Run.placedIn`):
    /// a base says the item is here, so its folder's entry must survive a crash first. Without
    /// this, a file system that does not order a rename before a later flush of another file
    /// (ext4 without a journal, as on this project's machines; btrfs and XFS log per file) could
    /// lose the entry and keep the base, and the next pass would take the missing file for a
    /// deletion and delete it on the server.
    func flushPlaced(_ run: inout Run) async throws {
        guard !run.placedIn.isEmpty else { return }
        let folders = run.placedIn.map { replica.absolute($0) }
        try await SyncFileWork.run { try LocalReplica.flushFolders(folders) }
        run.placedIn.removeAll()
    }

    /// Records a transfer as unfinished, in the pass's note log (``UnfinishedNoteLog``, the
    /// journal's at the pass's end), before its effect: a process killed once the server has the
    /// content (or once the file is placed) still knows it, when it starts again, for this
    /// device's own. Work that must follow the note at once writes it in its own file-work job
    /// instead, then calls ``noted(_:_:)``.
    func noteUnfinished(_ path: SyncPath, _ transfer: UnfinishedTransfer) async throws {
        try await SyncFileWork.run { [notes] in try notes.write(path, transfer) }
        noted(path, transfer)
    }

    /// Keeps a transfer the note log now holds as unfinished.
    func noted(_ path: SyncPath, _ transfer: UnfinishedTransfer) {
        unfinished[path] = transfer
        journaledUnfinished?[path] = transfer
    }

    // MARK: Checks

    /// The replica must be there and readable, and carry its marker once it has synced.
    private func checkReplica(syncedBefore: Bool) throws {
        var status = stat()
        guard stat(replica.root, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw SyncStop.replicaUnreadable(replica.root, String(cString: strerror(errno)))
        }
        let marker = replica.root + "/" + LocalReplica.markerName
        if access(marker, F_OK) != 0 {
            guard !syncedBefore else { throw SyncStop.replicaMarkerMissing(replica.root) }
            try writeReplicaMarker(token: nil)
        }
    }

    /// The token in the replica's marker file (nil when it has none).
    private func replicaToken() -> String? {
        guard let data = FileManager.default.contents(atPath: replica.root + "/" + LocalReplica.markerName), data.count < 4096 else { return nil }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("token: ") }
        return line.map { String($0.dropFirst("token: ".count)) }
    }

    /// Writes the replica's marker (by rename: never seen half written).
    private func writeReplicaMarker(token: String?) throws {
        let text = "folio replica: \(journal.domain)\n" + (token.map { "token: \($0)\n" } ?? "")
        try Data(text.utf8).write(to: URL(fileURLWithPath: replica.root + "/" + LocalReplica.markerName), options: .atomic)
    }

    private func readMarker(_ record: FileProviderItemRecord, request: FileProviderRequest) async throws -> DriveMarker {
        do {
            let (url, _) = try await provider.fetchContents(for: record.itemIdentifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
            defer { unlink(url.path) }
            let data = try Data(contentsOf: url)
            guard data.count < 64 << 10 else { throw SyncStop.remoteMarkerUnreadable("it is larger than 64 KiB") }
            return try JSONDecoder().decode(DriveMarker.self, from: data)
        } catch let error as DecodingError {
            throw SyncStop.remoteMarkerUnreadable("\(error)")
        }
    }

    /// Writes the marker (creating the meta folder when needed), against the version listed.
    private func writeMarker(_ marker: DriveMarker, tree: inout RemoteTree, request: FileProviderRequest) async throws -> FileProviderItemRecord {
        let staged = replica.staging + "/marker-\(UUID().uuidString)"
        try JSONEncoder().encode(marker).write(to: URL(fileURLWithPath: staged))
        defer { unlink(staged) }
        let contents = URL(fileURLWithPath: staged)
        if let existing = tree.marker {
            let result = try await provider.modifyItem(
                existing, baseVersion: existing.itemVersion, changedFields: .contents, contents: contents, options: [], request: request)
            return result.item.map(FileProviderItemRecord.init) ?? existing
        }
        if tree.meta == nil {
            let folder = FileProviderItemRecord(
                itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: .rootContainer, filename: RemoteTree.metaFolder, contentType: .folder)
            let result = try await provider.createItem(basedOn: folder, fields: [.filename], contents: nil, options: .mayAlreadyExist, request: request)
            tree.meta = result.item.map(FileProviderItemRecord.init) ?? folder
        }
        let template = FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: tree.meta!.itemIdentifier, filename: "drive.json", contentType: .json)
        let result = try await provider.createItem(basedOn: template, fields: [.contents, .filename], contents: contents, options: [], request: request)
        return result.item.map(FileProviderItemRecord.init) ?? template
    }
}

extension SyncAction {
    /// Whether the action runs in the first phase: folder creations and moves.
    var isFolderCreation: Bool {
        switch self {
        case .makeLocalFolder, .makeRemoteFolder, .moveRemote, .moveLocal: true
        default: false
        }
    }

    var isMove: Bool {
        switch self {
        case .moveRemote, .moveLocal: true
        default: false
        }
    }
}
