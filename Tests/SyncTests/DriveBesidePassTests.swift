import Folio
import FolioDaemon
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// A download (a program's open, a coordinated read) runs beside a pass of the same process that
/// leaves its file alone, and waits for a pass that changes it.
@Suite("The drive: downloads beside a pass", .elasticPool)
struct DriveBesidePassTests {
    @Test(.enabled(if: SyncBackend.Kind.apache.runs))
    func aDownloadWaitsOnlyForAPassThatChangesItsFile() async throws {
        let backend = try SyncBackend(.apache, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one")
        try one.write("changed.txt", "first")
        try one.write("other.txt", "left alone")
        try one.write("twice.txt", "asked for twice")
        try await one.settle()
        let home = try TemporaryDirectory("drive-beside")
        let paths = FolioPaths(environment: home.xdgEnvironment())
        let two = try DriveSync(provider: backend.provider(), paths: paths)
        let first = try await two.sync()
        #expect(first.placeholders == 3, "\(first)")
        func read(_ name: String) -> String? {
            FileManager.default.contents(atPath: paths.driveDirectory + "/" + name).map { String(decoding: $0, as: UTF8.self) }
        }

        // The server's file changes; here a new file is made, and the proxy holds its upload.
        try one.write("changed.txt", "second")
        try await one.settle()
        try Data("made here".utf8).write(to: URL(fileURLWithPath: paths.driveDirectory + "/made.txt"))
        let gate = FaultProxy.Gate()
        defer { gate.open() }
        proxy.add(.init(method: "PUT", pathContains: "made.txt", action: .hold(gate), times: 1))
        let pass = Task { try await two.sync() }
        #expect(await eventually { gate.held == 1 })

        // A file the pass leaves alone is downloaded while the pass waits.
        #expect(try await two.download(["other.txt"], progress: Progress(totalUnitCount: 0)) == ["other.txt"])
        #expect(read("other.txt") == "left alone")
        // The pass still runs, and shows as its own (its two actions: the upload, the placeholder).
        #expect(two.progress.pass?.actions == 2, "\(two.progress)")

        // Two downloads of one file beside the pass take turns: the second finds it downloaded.
        let held = FaultProxy.Gate()
        defer { held.open() }
        proxy.add(.init(method: "GET", pathContains: "twice.txt", action: .hold(held), times: 1))
        let firstAsk = Task { try await two.download(["twice.txt"], progress: Progress(totalUnitCount: 0)) }
        #expect(await eventually { held.held == 1 })
        let secondAsk = Task { try await two.download(["twice.txt"], progress: Progress(totalUnitCount: 0)) }
        #expect(await eventually { DriveLock.waiting(at: two.lockPath) == 1 })
        held.open()
        #expect(try await firstAsk.value == ["twice.txt"])
        #expect(try await secondAsk.value == [])
        #expect(read("twice.txt") == "asked for twice")

        // The file whose placeholder the pass brings up to date waits for the pass's end, then
        // downloads what the pass found.
        let waiting = Task { try await two.download(["changed.txt"], progress: Progress(totalUnitCount: 0)) }
        #expect(await eventually { DriveLock.waiting(at: two.lockPath) == 1 })
        #expect(gate.held == 1 && read("changed.txt") == nil)
        gate.open()
        let report = try await pass.value
        #expect(report.uploaded == 1 && report.placeholders == 1 && report.deferred.isEmpty, "\(report)")
        #expect(try await waiting.value == ["changed.txt"])
        #expect(read("changed.txt") == "second")

        // What was downloaded beside the pass is recorded: the next pass has nothing to do.
        #expect(try await two.sync() == SyncReport())
    }
}
