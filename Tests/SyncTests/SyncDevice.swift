import Folio
import FolioDaemon
@testable import FolioSync
import FolioTesting
import Foundation

/// One "device" in a sync test: its own replica folder, journal and version store, syncing with a
/// provider shared with the other devices.
final class SyncDevice: @unchecked Sendable {
    let name: String
    let home: TemporaryDirectory
    let root: String
    let versions: VersionStore
    let journal: SyncJournal
    let engine: SyncEngine

    /// With `keepsEverything` (most tests) the whole drive is pinned: remote files arrive downloaded,
    /// not as placeholders.
    init(_ name: String, provider: any FileProvider, guards: SyncGuards = SyncGuards(), keepsEverything: Bool = true) async throws {
        self.name = name
        home = try TemporaryDirectory("folio-device-\(name)")
        root = home.child("Drive").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        versions = VersionStore(directory: home.child("versions").path)
        journal = try SyncJournal(path: home.child("index.sqlite").path, domain: "drive")
        engine = SyncEngine(provider: provider, replica: LocalReplica(root: root), journal: journal, versions: versions, guards: guards)
        if keepsEverything { try await journal.setPinned([.root], true) }
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    /// Writes `text` to `relative` (creating folders), as an app would.
    func write(_ relative: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: (path(relative) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(relative)))
    }

    func read(_ relative: String) -> String? {
        FileManager.default.contents(atPath: path(relative)).map { String(decoding: $0, as: UTF8.self) }
    }

    func delete(_ relative: String) throws { try FileManager.default.removeItem(atPath: path(relative)) }

    func sync(confirmingDeletions: Bool = false, retryingSetAside: Bool = false) async throws -> SyncReport {
        try await engine.sync(confirmingDeletions: confirmingDeletions, retryingSetAside: retryingSetAside)
    }

    /// Passes until one defers nothing (at most five), for a test's setting up: on a loaded machine a
    /// request can time out, and the engine then defers the item to the next pass, as it should.
    /// Returns what the passes did together (what the last one still deferred or skipped).
    @discardableResult
    func settle(confirmingDeletions: Bool = false) async throws -> SyncReport {
        var total = SyncReport()
        for attempt in 0..<5 {
            do {
                let report = try await sync(confirmingDeletions: confirmingDeletions)
                total.add(report)
                if report.deferred.isEmpty { break }
            } catch is FileProviderError where attempt < 4 {
                // A pass that failed whole (its listing timed out): the next one tries again.
            }
        }
        return total
    }

    /// The synced files and their contents (Folio's own files left out).
    func tree() -> [String: String] {
        var result: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            if relative.hasPrefix(LocalReplica.stagingName) || LocalReplica.isPrivate(name) { continue }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path(relative), isDirectory: &isFolder), !isFolder.boolValue { result[relative] = read(relative) }
        }
        return result
    }

    /// The files in the staging folder and in its folders (the fetch folders stay, emptied).
    func stagedFiles() -> [String] {
        let staging = path(LocalReplica.stagingName)
        var files: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: staging)
        while let relative = enumerator?.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: staging + "/" + relative, isDirectory: &isFolder), !isFolder.boolValue { files.append(relative) }
        }
        return files
    }

    /// The synced files as path bytes, a NUL, and content bytes: unlike `tree()`, whose `String`
    /// keys merge the NFC and NFD spellings of a name, two such files stay two.
    func byteTree() -> Set<[UInt8]> {
        var result: Set<[UInt8]> = []
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            if relative.hasPrefix(LocalReplica.stagingName) || LocalReplica.isPrivate(name) { continue }
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path(relative), isDirectory: &isFolder), !isFolder.boolValue else { continue }
            result.insert(Array(relative.utf8) + [0] + Array(FileManager.default.contents(atPath: path(relative)) ?? Data()))
        }
        return result
    }

    /// Whether `text` survives on this device: as a file's content or as a stored version.
    func keeps(_ text: String) -> Bool {
        if tree().values.contains(text) { return true }
        let hash = ContentDigest.sha256(of: Data(text.utf8))
        return versions.allVersions().contains { $0.record.object == hash }
    }

    /// The unresolved conflict versions of `relative`, as text.
    func conflicts(_ relative: String) throws -> [String] {
        try versions.versions(ofItemAt: path(relative)).records.filter { $0.isConflict && !$0.isResolved }.map {
            String(decoding: try versions.readObject($0.object), as: UTF8.self)
        }
    }
}

/// What the users wrote and still mean to keep: the last content each device's user gave each path
/// (what a user overwrote or deleted themselves is theirs to lose). Every entry must survive on
/// some device, as a file or as a version.
struct ByteLedger {
    private var current: [String: String] = [:]

    mutating func wrote(_ text: String, on device: SyncDevice, at path: String) { current[device.name + ":" + path] = text }
    mutating func deleted(on device: SyncDevice, at path: String) { current[device.name + ":" + path] = nil }

    /// The contents found on none of `devices` (files or versions).
    func lost(on devices: [SyncDevice]) -> [String] {
        current.values.sorted().filter { text in !devices.contains { $0.keeps(text) } }
    }
}

extension SyncReport {
    /// Adds what a later pass did: counts summed, conflicts gathered, and what is still deferred or
    /// skipped taken from the later pass.
    mutating func add(_ later: SyncReport) {
        uploaded += later.uploaded
        downloaded += later.downloaded
        placeholders += later.placeholders
        moved += later.moved
        deletedOnServer += later.deletedOnServer
        deletedHere += later.deletedHere
        converged += later.converged
        conflicts += later.conflicts
        sharedConflicts += later.sharedConflicts
        resolvedConflicts += later.resolvedConflicts
        heldDeletions += later.heldDeletions
        merged = merged || later.merged
        deferred = later.deferred
        setAside = later.setAside
        skipped = later.skipped
    }
}

extension SyncJournal {
    /// The journal of `domain` in the database at `path`, opened and migrated as the daemon and
    /// `folio drive` open it (a pool of this test's own).
    init(path: String, domain: String) throws {
        self.init(database: try IndexStore(path: path).pool, domain: domain)
    }
}
