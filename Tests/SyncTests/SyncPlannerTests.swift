@testable import FolioSync
import Foundation
import Testing
import FolioTestTraits

/// The planner alone: a pure function, each rule a case.
@Suite("Sync planner", .elasticPool)
struct SyncPlannerTests {
    static let fingerprint = LocalFingerprint(device: 1, inode: 1, size: 1, modified: 1)

    static func local(_ hash: String) -> LocalEntry { LocalEntry(isFolder: false, hash: hash, fingerprint: fingerprint) }
    static func remote(_ version: String) -> RemoteEntry { RemoteEntry(identifier: "id", isFolder: false, version: Data(version.utf8), size: 1) }
    static func base(_ hash: String, _ version: String) -> BaseEntry {
        BaseEntry(isFolder: false, identifier: "id", version: Data(version.utf8), hash: hash, fingerprint: fingerprint)
    }

    /// One path: what the planner decides from (local, remote, base).
    static func decide(_ l: LocalEntry?, _ r: RemoteEntry?, _ b: BaseEntry?, merging: Bool = false, wanted: Bool = true) -> SyncAction? {
        let path = SyncPath("f.txt")
        return SyncPlanner.plan(
            local: l.map { [path: $0] } ?? [:], remote: r.map { [path: $0] } ?? [:], base: b.map { [path: $0] } ?? [:], merging: merging,
            keepsLocal: { _ in wanted }
        ).first
    }

    /// A placeholder is never a local change; remote files not wanted here arrive as placeholders,
    /// wanted ones are downloaded; a placeholder that stands for nothing goes.
    @Test func placeholders() {
        let p = SyncPath("f.txt")
        let stub = LocalEntry(isFolder: false, hash: nil, isPlaceholder: true)
        var held = Self.base("h0", "v0")
        held.hash = nil
        held.fingerprint = nil
        held.isPlaceholder = true
        // New remote files: a placeholder unless wanted.
        #expect(Self.decide(nil, Self.remote("v1"), nil, wanted: false) == .placehold(p, Self.remote("v1")))
        #expect(Self.decide(nil, Self.remote("v1"), nil, wanted: true) == .download(p, Self.remote("v1")))
        // An unchanged placeholder stays; a remote change moves only the placeholder; pinned, it downloads.
        #expect(Self.decide(stub, Self.remote("v0"), held, wanted: false) == nil)
        #expect(Self.decide(stub, Self.remote("v1"), held, wanted: false) == .placehold(p, Self.remote("v1")))
        #expect(Self.decide(stub, Self.remote("v0"), held, wanted: true) == .download(p, Self.remote("v0")))
        // Deleted on the server: the placeholder goes; deleted here (the stub removed): a tombstone.
        #expect(Self.decide(stub, nil, held, wanted: false) == .deleteLocal(p, held))
        #expect(Self.decide(nil, Self.remote("v0"), held, wanted: false) == .deleteRemote(p, held))
        // Written over: a local change against the base (a conflict if the server changed too).
        #expect(Self.decide(Self.local("h1"), Self.remote("v0"), held, wanted: false) == .upload(p, base: held, remote: Self.remote("v0")))
        #expect(Self.decide(Self.local("h1"), Self.remote("v1"), held, wanted: false) == .reconcile(p, Self.remote("v1")))
        // A stub without a base: adopted when the server has the file, removed when it has not.
        #expect(Self.decide(stub, Self.remote("v0"), nil, wanted: false) == .placehold(p, Self.remote("v0")))
        #expect(Self.decide(stub, nil, nil, wanted: false) == .removeStub(p))
        #expect(Self.decide(stub, nil, held, merging: true, wanted: false) == .removeStub(p))
        // A local file stays local: a remote change downloads even when not pinned.
        #expect(Self.decide(Self.local("h0"), Self.remote("v1"), Self.base("h0", "v0"), wanted: false) == .download(p, Self.remote("v1")))
    }

    /// Moves are paired by the file's identity (here) or content version (server), and a folder
    /// moves as one only when everything that left it landed at the same place in the new one.
    @Test func movesArePaired() {
        func f(_ inode: UInt64) -> LocalFingerprint { LocalFingerprint(device: 1, inode: inode, size: 5, modified: 7) }
        func based(_ id: String, _ inode: UInt64) -> BaseEntry { BaseEntry(isFolder: false, identifier: id, version: Data(id.utf8), hash: "h\(inode)", fingerprint: f(inode)) }
        func listed(_ id: String) -> RemoteEntry { RemoteEntry(identifier: id, isFolder: false, version: Data(id.utf8), size: 5) }
        let folder = BaseEntry(isFolder: true, identifier: "D", version: Data())
        // A renamed file; a folder renamed with both files in it.
        let base: [SyncPath: BaseEntry] = [SyncPath("a"): based("a", 1), SyncPath("D"): folder, SyncPath("D/x"): based("D/x", 2), SyncPath("D/y"): based("D/y", 3)]
        let remote: [SyncPath: RemoteEntry] = [SyncPath("a"): listed("a"), SyncPath("D"): RemoteEntry(identifier: "D", isFolder: true, version: Data()), SyncPath("D/x"): listed("D/x"), SyncPath("D/y"): listed("D/y")]
        var local: [SyncPath: LocalEntry] = [
            SyncPath("b"): LocalEntry(isFolder: false, fingerprint: f(1)), SyncPath("E"): LocalEntry(isFolder: true),
            SyncPath("E/x"): LocalEntry(isFolder: false, fingerprint: f(2)), SyncPath("E/y"): LocalEntry(isFolder: false, fingerprint: f(3)),
        ]
        let planned = SyncPlanner.plan(local: local, remote: remote, base: base)
        #expect(Set(planned.map { "\($0)" }) == [
            "\(SyncAction.moveRemote(from: SyncPath("a"), to: SyncPath("b"), based("a", 1)))", "\(SyncAction.moveRemote(from: SyncPath("D"), to: SyncPath("E"), folder))",
        ], "\(planned)")
        // One file of the folder went elsewhere: no folder move, each file moves on its own.
        local[SyncPath("E/y")] = nil
        local[SyncPath("z")] = LocalEntry(isFolder: false, fingerprint: f(3))
        let split = SyncPlanner.plan(local: local, remote: remote, base: base)
        #expect(split.contains(.moveRemote(from: SyncPath("D/y"), to: SyncPath("z"), based("D/y", 3))) && split.contains(.makeRemoteFolder(SyncPath("E"))))
        #expect(!split.contains { if case .moveRemote(let from, _, _) = $0 { return from == SyncPath("D") } else { return false } })
        // Two gone files with the same identity are not guessed at.
        let twins: [SyncPath: BaseEntry] = [SyncPath("p"): based("p", 9), SyncPath("q"): based("q", 9)]
        let guessed = SyncPlanner.plan(
            local: [SyncPath("r"): LocalEntry(isFolder: false, fingerprint: f(9))], remote: [SyncPath("p"): listed("p"), SyncPath("q"): listed("q")], base: twins)
        #expect(!guessed.contains { $0.isMove }, "\(guessed)")
        // The server moved a file: moved here, not fetched.
        let arrived = SyncPlanner.plan(
            local: [SyncPath("a"): LocalEntry(isFolder: false, hash: "h1", fingerprint: f(1))], remote: [SyncPath("c"): RemoteEntry(identifier: "c", isFolder: false, version: Data("a".utf8), size: 5)],
            base: [SyncPath("a"): based("a", 1)])
        #expect(arrived == [.moveLocal(from: SyncPath("a"), to: SyncPath("c"), RemoteEntry(identifier: "c", isFolder: false, version: Data("a".utf8), size: 5))], "\(arrived)")
        // The server moved two files whose versions are equal (Apache's ETag: one size, one clock
        // tick): each pairs by its name; a third of that version whose name came twice is fetched.
        let shared = Data("\"5-tick\"".utf8)
        func same(_ id: String) -> RemoteEntry { RemoteEntry(identifier: id, isFolder: false, version: shared, size: 5) }
        func sameBased(_ id: String, _ inode: UInt64) -> BaseEntry {
            BaseEntry(isFolder: false, identifier: id, version: shared, hash: "h\(inode)", fingerprint: f(inode))
        }
        let tick = SyncPlanner.plan(
            local: [
                SyncPath("keep.txt"): LocalEntry(isFolder: false, hash: "h4", fingerprint: f(4)),
                SyncPath("inner.txt"): LocalEntry(isFolder: false, hash: "h5", fingerprint: f(5)),
            ],
            remote: [SyncPath("Later/keep.txt"): same("Later/keep.txt"), SyncPath("Deep/inner.txt"): same("Deep/inner.txt"), SyncPath("Other/inner.txt"): same("Other/inner.txt")],
            base: [SyncPath("keep.txt"): sameBased("keep.txt", 4), SyncPath("inner.txt"): sameBased("inner.txt", 5)])
        #expect(tick.contains(.moveLocal(from: SyncPath("keep.txt"), to: SyncPath("Later/keep.txt"), same("Later/keep.txt"))), "\(tick)")
        #expect(!tick.contains { if case .moveLocal(let from, _, _) = $0 { return from == SyncPath("inner.txt") } else { return false } }, "\(tick)")
    }

    @Test func bisyncsTenCases() {
        let p = SyncPath("f.txt")
        let b = Self.base("h0", "v0")
        // New on either side.
        #expect(Self.decide(Self.local("h1"), nil, nil) == .upload(p, base: nil, remote: nil))
        #expect(Self.decide(nil, Self.remote("v1"), nil) == .download(p, Self.remote("v1")))
        // Newer on either side.
        #expect(Self.decide(Self.local("h1"), Self.remote("v0"), b) == .upload(p, base: b, remote: Self.remote("v0")))
        #expect(Self.decide(Self.local("h0"), Self.remote("v1"), b) == .download(p, Self.remote("v1")))
        // Deleted on either side (a tombstone against the base).
        #expect(Self.decide(nil, Self.remote("v0"), b) == .deleteRemote(p, b))
        #expect(Self.decide(Self.local("h0"), nil, b) == .deleteLocal(p, b))
        // Changed on both.
        #expect(Self.decide(Self.local("h1"), Self.remote("v1"), b) == .reconcile(p, Self.remote("v1")))
        // Newer on one side, deleted on the other: the change wins.
        #expect(Self.decide(nil, Self.remote("v1"), b) == .download(p, Self.remote("v1")))
        #expect(Self.decide(Self.local("h1"), nil, b) == .upload(p, base: b, remote: nil))
        // Deleted on both.
        #expect(Self.decide(nil, nil, b) == .forget(p))
        // Unchanged.
        #expect(Self.decide(Self.local("h0"), Self.remote("v0"), b) == nil)
    }

    @Test func aMergeNeverDeletes() {
        let b = Self.base("h0", "v0")
        #expect(Self.decide(nil, Self.remote("v0"), b, merging: true) == .download(SyncPath("f.txt"), Self.remote("v0")))
        #expect(Self.decide(Self.local("h0"), nil, b, merging: true) == .upload(SyncPath("f.txt"), base: nil, remote: nil))
        #expect(Self.decide(Self.local("h0"), Self.remote("v0"), b, merging: true) == .reconcile(SyncPath("f.txt"), Self.remote("v0")))
    }

    @Test func unreadableFoldersAreLeftAlone() {
        let inner = SyncPath("locked/f.txt")
        let plan = SyncPlanner.plan(
            local: [:], remote: [inner: Self.remote("v0")], base: [inner: Self.base("h0", "v0"), SyncPath("locked"): BaseEntry(isFolder: true, identifier: "d", version: Data())],
            unreadable: [SyncPath("locked")])
        #expect(plan.isEmpty, "\(plan)")
    }

    /// A folder deleted on one side stays, and is made again on the other, while it holds something new.
    @Test func aDeletedFolderWithNewContentsIsKept() {
        let folder = SyncPath("docs"), file = SyncPath("docs/new.txt")
        let folderBase = BaseEntry(isFolder: true, identifier: "d", version: Data())
        let plan = SyncPlanner.plan(
            local: [folder: LocalEntry(isFolder: true), file: LocalEntry(isFolder: false, fingerprint: Self.fingerprint)], remote: [:],
            base: [folder: folderBase])
        #expect(plan.contains(.makeRemoteFolder(folder)) && plan.contains(.upload(file, base: nil, remote: nil)), "\(plan)")
    }

    @Test func theGuardHoldsMassDeletions() {
        let guards = SyncGuards()
        let deletions = (0..<6).map { SyncAction.deleteRemote(SyncPath("f\($0)"), Self.base("h", "v")) }
        let upload = SyncAction.upload(SyncPath("new"), base: nil, remote: nil)
        let held = guards.split(deletions + [upload], syncedCount: 8, confirmed: false)
        #expect(held.run == [upload] && held.held.count == 6)
        #expect(guards.split(deletions, syncedCount: 8, confirmed: true).held.isEmpty)
        #expect(guards.split(Array(deletions.prefix(2)), syncedCount: 3, confirmed: false).held.isEmpty, "two deletions are below the minimum")
        #expect(guards.split(Array(deletions.prefix(3)), syncedCount: 100, confirmed: false).held.isEmpty)
    }

    @Test func pathsCompareAsBytes() {
        #expect(SyncPath("caf\u{e9}") != SyncPath("cafe\u{301}"))
        #expect(SyncPath("a/b/c").isWithin(SyncPath("a/b")) && !SyncPath("a/bc").isWithin(SyncPath("a/b")))
        #expect(SyncPath("a/b/c").parent == SyncPath("a/b") && SyncPath("a/b/c").name == "c" && SyncPath("a").parent == nil)
    }
}
