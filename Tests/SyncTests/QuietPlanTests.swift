import Folio
@testable import FolioSync
import FolioServers
import FolioTestTraits
import Foundation
import Testing

/// A quiet pass: the scan says whether the replica is exactly its base, and the planner then checks
/// only the server's side. Whatever the shortcut decides must be what planning every path decides.
@Suite("Quiet plan", .elasticPool)
struct QuietPlanTests {
    static let fingerprint = LocalFingerprint(device: 1, inode: 7, size: 3, modified: 9)

    /// A synced tree: folder `docs` holding `a.txt` and `b.txt`, and `top.txt` beside it.
    static let base: [SyncPath: BaseEntry] = [
        SyncPath("docs"): BaseEntry(isFolder: true, identifier: "docs/", version: Data()),
        SyncPath("docs/a.txt"): BaseEntry(isFolder: false, identifier: "docs/a.txt", version: Data("va".utf8), hash: "ha", fingerprint: fingerprint),
        SyncPath("docs/b.txt"): BaseEntry(isFolder: false, identifier: "docs/b.txt", version: Data("vb".utf8), hash: "hb", fingerprint: fingerprint),
        SyncPath("top.txt"): BaseEntry(isFolder: false, identifier: "top.txt", version: Data("vt".utf8), hash: "ht", fingerprint: fingerprint),
    ]
    static var local: [SyncPath: LocalEntry] {
        base.mapValues { LocalEntry(isFolder: $0.isFolder, hash: $0.hash, fingerprint: $0.fingerprint) }
    }
    static var remote: [SyncPath: RemoteEntry] {
        base.mapValues { RemoteEntry(identifier: $0.identifier, isFolder: $0.isFolder, version: $0.isFolder ? Data("listed".utf8) : $0.version, size: 3) }
    }

    static func plans(_ remote: [SyncPath: RemoteEntry]) -> (quick: [SyncAction], full: [SyncAction]) {
        (SyncPlanner.plan(local: local, remote: remote, base: base, localMatchesBase: true), SyncPlanner.plan(local: local, remote: remote, base: base))
    }

    @Test func aServerAsInTheBasePlansNothing() {
        let (quick, full) = Self.plans(Self.remote)
        #expect(quick.isEmpty && full.isEmpty, "\(quick) \(full)")
        #expect(SyncPlanner.matchesBase(Self.remote, Self.base))
    }

    /// Each way the server can differ from the base is planned as in full, not skipped.
    @Test func anyDifferenceOnTheServerIsPlannedInFull() {
        var changed = Self.remote
        changed[SyncPath("docs/a.txt")]?.version = Data("va2".utf8)
        var renamed = Self.remote
        renamed[SyncPath("docs")]?.identifier = "other/"
        var gone = Self.remote
        gone[SyncPath("top.txt")] = nil
        var added = Self.remote
        added[SyncPath("docs/c.txt")] = RemoteEntry(identifier: "docs/c.txt", isFolder: false, version: Data("vc".utf8), size: 1)
        var replaced = Self.remote
        replaced[SyncPath("top.txt")] = RemoteEntry(identifier: "top.txt", isFolder: true, version: Data(), size: nil)
        var reidentified = Self.remote
        reidentified[SyncPath("docs/b.txt")]?.identifier = "docs/b2.txt"
        // Added and gone at once: the counts agree, the paths do not.
        var swapped = gone
        swapped[SyncPath("docs/c.txt")] = added[SyncPath("docs/c.txt")]
        for (name, remote) in [("changed", changed), ("renamed folder", renamed), ("gone", gone), ("added", added), ("folder for file", replaced),
            ("new identifier", reidentified), ("swapped", swapped)]
        {
            let (quick, full) = Self.plans(remote)
            #expect(!SyncPlanner.matchesBase(remote, Self.base), "\(name)")
            #expect(!full.isEmpty && quick == full, "\(name): \(quick) vs \(full)")
        }
    }

    /// The shortcut is not taken in a merge, nor with an unreadable folder, however the sides look.
    @Test func aMergeOrAnUnreadableFolderIsPlannedInFull() {
        let merged = SyncPlanner.plan(local: Self.local, remote: Self.remote, base: Self.base, merging: true, localMatchesBase: true)
        #expect(merged == SyncPlanner.plan(local: Self.local, remote: Self.remote, base: Self.base, merging: true) && !merged.isEmpty)
        var remote = Self.remote
        remote[SyncPath("docs/a.txt")] = nil
        let unreadable = SyncPlanner.plan(local: Self.local, remote: remote, base: Self.base, unreadable: [SyncPath("docs")], localMatchesBase: true)
        #expect(unreadable == SyncPlanner.plan(local: Self.local, remote: remote, base: Self.base, unreadable: [SyncPath("docs")]))
    }

    /// The scan says the replica matches its base only when every path is the base's, as the base has it.
    @Test func theScanTellsAReplicaExactlyAsItsBase() throws {
        let scratch = try TemporaryDirectory("quiet-scan")
        let root = scratch.path
        let replica = LocalReplica(root: root)
        try FileManager.default.createDirectory(atPath: root + "/docs", withIntermediateDirectories: true)
        for name in ["docs/a.txt", "docs/b.txt", "top.txt"] { try Data(name.utf8).write(to: URL(fileURLWithPath: root + "/" + name)) }
        func based() throws -> [SyncPath: BaseEntry] {
            let scan = try replica.scan(base: [:])
            #expect(!scan.matchesBase, "an empty base with files here")
            return Dictionary(uniqueKeysWithValues: scan.entries.map { path, entry in
                (path, BaseEntry(isFolder: entry.isFolder, identifier: path.text, version: Data(), hash: entry.isFolder ? nil : "h", fingerprint: entry.fingerprint))
            })
        }
        let base = try based()
        #expect(base.count == 4)
        #expect(try replica.scan(base: base).matchesBase)

        // A file touched (another fingerprint), one added, one removed, a folder where a file was, a stub.
        var touched = base
        touched[SyncPath("top.txt")]?.fingerprint?.modified += 1
        #expect(try !replica.scan(base: touched).matchesBase)
        var missing = base
        missing[SyncPath("docs/b.txt")] = nil
        #expect(try !replica.scan(base: missing).matchesBase)
        var extra = base
        extra[SyncPath("gone.txt")] = BaseEntry(isFolder: false, identifier: "gone.txt", version: Data(), hash: "h", fingerprint: Self.fingerprint)
        #expect(try !replica.scan(base: extra).matchesBase)
        var folderWas = base
        folderWas[SyncPath("top.txt")]?.isFolder = true
        #expect(try !replica.scan(base: folderWas).matchesBase)
        var placeholder = base
        placeholder[SyncPath("docs/a.txt")]?.isPlaceholder = true
        #expect(try !replica.scan(base: placeholder).matchesBase)
        let stub = PlaceholderStub(name: "far.txt", size: 1, modified: nil, contentType: nil)
        try stub.encoded().write(to: URL(fileURLWithPath: root + "/far.txt" + PlaceholderStub.suffix))
        #expect(try !replica.scan(base: base).matchesBase, "a placeholder's stub")
    }
}
