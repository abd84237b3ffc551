import Folio
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// A device that does not keep everything downloaded, against real servers: remote changes move
/// placeholders, not content; stubs removed here are deletions; a file written over a placeholder
/// is sent; pinned folders stay downloaded; an interrupted eviction and a file named like a stub
/// lose nothing.
@Suite("Placeholders", .elasticPool)
struct PlaceholderTests {
    static let kinds = [SyncBackend.Kind.memory, .apache, .moto].filter(\.runs)

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test(arguments: kinds)
    func remoteChangesMoveThePlaceholderNotTheContent(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        try one.write("a.txt", "first")
        try one.write("dir/b.txt", "b")
        try await one.settle()
        let first = try await two.sync()
        #expect(first.placeholders == 2 && first.downloaded == 0, "\(first)")
        #expect(PlaceholderStub.read(at: two.path("a.txt.folio-cloud"))?.size == 5 && !exists(two.path("a.txt")))
        try one.write("a.txt", "first, then longer")
        try await one.settle()
        let changed = try await two.sync()
        #expect(changed.placeholders == 1 && changed.downloaded == 0, "\(changed)")
        #expect(PlaceholderStub.read(at: two.path("a.txt.folio-cloud"))?.size == 18)
        try one.delete("dir/b.txt")
        try await one.settle()
        let gone = try await two.sync()
        #expect(gone.deletedHere == 1 && !exists(two.path("dir/b.txt.folio-cloud")), "\(gone)")
        // Removing a placeholder here deletes the file (its bytes stay a version on the device that had them).
        try two.delete("a.txt.folio-cloud")
        let removed = try await two.sync()
        #expect(removed.deletedOnServer == 1, "\(removed)")
        let mirrored = try await one.sync()
        #expect(mirrored.deletedHere == 1 && one.tree().isEmpty && one.keeps("first, then longer"), "\(mirrored)")
        #expect(try await two.sync() == SyncReport())
    }

    @Test(arguments: kinds)
    func aFileWrittenOverAPlaceholderIsSentAndTheStubGoes(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        try one.write("plan.txt", "the plan")
        try one.write("both.txt", "the first both")
        try await one.settle()
        try await two.settle()
        try two.write("plan.txt", "the plan, rewritten on two")
        // Written over on both sides: both kept.
        try one.write("both.txt", "both, as one changed it")
        try await one.settle()
        try two.write("both.txt", "both, as two wrote it over the placeholder")
        let sent = try await two.sync()
        #expect(sent.uploaded == 1 && sent.conflicts == ["both.txt"], "\(sent)")
        #expect(!exists(two.path("plan.txt.folio-cloud")) && !exists(two.path("both.txt.folio-cloud")))
        #expect(two.read("both.txt") == "both, as one changed it" && two.keeps("both, as two wrote it over the placeholder"))
        let pulled = try await one.sync()
        #expect(pulled.downloaded == 1 && one.read("plan.txt") == "the plan, rewritten on two", "\(pulled)")
    }

    @Test(arguments: kinds)
    func pinnedFoldersStayDownloaded(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        for name in ["Keep/a.txt", "Keep/deep/b.txt", "Other/c.txt"] { try one.write(name, "content of \(name)") }
        try await one.settle()
        try await two.engine.setPinned([SyncPath("Keep")], true)
        let first = try await two.sync()
        #expect(first.downloaded == 2 && first.placeholders == 1, "\(first)")
        #expect(two.read("Keep/deep/b.txt") == "content of Keep/deep/b.txt" && exists(two.path("Other/c.txt.folio-cloud")))
        try one.write("Keep/new.txt", "new in a pinned folder")
        try await one.settle()
        #expect(try await two.sync().downloaded == 1 && two.read("Keep/new.txt") == "new in a pinned folder")
        let refused = try await two.engine.evict([SyncPath("Keep/a.txt")])
        #expect(refused.evicted.isEmpty && refused.refused.first?.1.code == .nonEvictable && two.read("Keep/a.txt") != nil)
        // Downloaded on demand, with progress; evicted again.
        let progress = Progress(totalUnitCount: 0)
        #expect(try await two.engine.materialize([SyncPath("Other")], progress: progress) == [SyncPath("Other/c.txt")])
        #expect(progress.fractionCompleted == 1 && two.read("Other/c.txt") == "content of Other/c.txt")
        let evicted = try await two.engine.evict([SyncPath("Other")])
        #expect(evicted.evicted == [SyncPath("Other/c.txt")] && !exists(two.path("Other/c.txt")) && exists(two.path("Other/c.txt.folio-cloud")))
        #expect(try await two.sync() == SyncReport(), "an eviction looked like a change")
        #expect(try await one.sync() == SyncReport())
    }

    /// Files of 0, 1, 4095, 4096 and 4097 bytes: placeholders with their sizes, materialized byte
    /// for byte (a 0-byte one too: local, no stub), evicted, and materialized again.
    @Test(arguments: kinds)
    func boundarySizesRoundTrip(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        let sizes = [0, 1, 4095, 4096, 4097]
        func content(_ size: Int) -> Data { Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ size) }) }
        for size in sizes { try content(size).write(to: URL(fileURLWithPath: one.path("b\(size).bin"))) }
        try await one.settle()
        #expect(try await two.settle().placeholders == sizes.count)
        for size in sizes { #expect(PlaceholderStub.read(at: two.path("b\(size).bin.folio-cloud"))?.size == Int64(size)) }
        let all = sizes.map { SyncPath("b\($0).bin") }
        for round in 0..<2 {
            #expect(try await two.engine.materialize([.root], progress: Progress(totalUnitCount: 0)).sorted() == all.sorted(), "round \(round)")
            for size in sizes {
                #expect(FileManager.default.contents(atPath: two.path("b\(size).bin")) == content(size), "\(size) B, round \(round)")
                #expect(!exists(two.path("b\(size).bin.folio-cloud")))
            }
            #expect(try await two.engine.status([.root]).allSatisfy { $0.1.state == .local })
            #expect(try await two.engine.evict([.root]).evicted.count == sizes.count)
            #expect(try await two.sync() == SyncReport())
        }
    }

    /// A file an app still holds open is not evicted (Apple: nonEvictable, EBUSY); closed, it is.
    @Test func anOpenFileIsNotEvicted() async throws {
        let backend = try SyncBackend(.memory)
        let one = try await backend.device("one", keepsEverything: false)
        try one.write("open.txt", "held open by an app")
        try await one.settle()
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 3< \"$0\"; echo ready; exec sleep 30", one.path("open.txt")]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        _ = output.fileHandleForReading.availableData
        let refused = try await one.engine.evict([SyncPath("open.txt")])
        #expect(refused.evicted.isEmpty && refused.refused.first?.1.code == .nonEvictable, "\(refused)")
        #expect(refused.refused.first?.1.message?.contains("pid \(holder.processIdentifier)") == true, "\(refused)")
        #expect(one.read("open.txt") == "held open by an app" && !exists(one.path("open.txt.folio-cloud")))
        // SIGKILL: a signal the test process blocks stays blocked in its children.
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        #expect(try await one.engine.evict([SyncPath("open.txt")]).evicted == [SyncPath("open.txt")])
    }

    /// Eviction writes the stub before it moves the file away: killed between the two, both are
    /// there, and the file wins.
    @Test func anInterruptedEvictionKeepsTheFile() async throws {
        let backend = try SyncBackend(.memory)
        let one = try await backend.device("one", keepsEverything: false)
        try one.write("kept.txt", "kept through a crash")
        try await one.settle()
        try PlaceholderStub(name: "kept.txt", size: 20, modified: nil, contentType: nil).encoded().write(to: URL(fileURLWithPath: one.path("kept.txt.folio-cloud")))
        #expect(try await one.sync() == SyncReport())
        #expect(one.read("kept.txt") == "kept through a crash" && !exists(one.path("kept.txt.folio-cloud")))
    }

    /// A file of someone's that only looks like a stub by its name is never replaced nor removed.
    @Test func aFileNamedLikeAStubIsLeftAlone() async throws {
        let backend = try SyncBackend(.memory)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        try one.write("x", "the real x")
        try await one.settle()
        try two.write("x.folio-cloud", "not a stub: notes about the cloud")
        let pass = try await two.sync()
        #expect(pass.deferred["x"] != nil && two.read("x.folio-cloud") == "not a stub: notes about the cloud", "\(pass)")
        try two.write("y.folio-cloud", "{\"folio-placeholder\":1,\"name\":\"../y\",\"size\":1}")
        _ = try await two.sync()
        #expect(two.read("y.folio-cloud") != nil)
    }
}
