#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioDaemon
import FolioProviders
import FolioServers
import FolioSync
import Foundation

/// `folio bench sync`: the drive's sync against rclone (Debian's, default flags: 4 transfers, 8
/// checkers) on one Apache mod_dav_fs server on loopback, in one run: many small files up and
/// down, a no-change re-sync, and one large file up and down. Each figure is a time beside
/// rclone's; the ratio is rclone's time over Folio's (above 1: Folio is faster).
enum SyncBenchmarks {
    struct Row {
        var name: String
        var folio: Double
        var rclone: Double
    }

    static func run(files: Int, fileSize: Int, largeSize: Int64, folioOnly: Bool = false) async throws {
        guard let rclone = ProcessRunner.which("rclone") else { throw BenchmarkFailure("rclone is not installed (apt-get install rclone)") }
        if let reason = TestServer.unavailability(.apache) { throw BenchmarkFailure(reason) }
        let server = try TestServer(.apache)
        let scratch = try TemporaryDirectory("folio-bench-sync")
        for folder in ["folio", "rclone", "folio-large", "rclone-large"] {
            try FileManager.default.createDirectory(at: server.root!.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        server.fixOwnership()
        var rows: [Row] = []

        func device(_ name: String, _ remote: String) async throws -> (DriveSync, FolioPaths) {
            let home = scratch.child(name).path
            let paths = FolioPaths(environment: ["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config", "XDG_STATE_HOME": home + "/state"])
            let provider = WebDAVProvider(baseURL: server.baseURL.appendingPathComponent(remote + "/"))
            let drive = try DriveSync(provider: provider, paths: paths)
            // Downloads are measured as downloads: the bench's devices keep everything local.
            try await drive.setPinned([""], true)
            return (drive, paths)
        }
        func rcloneCopy(_ from: String, _ to: String) throws -> Double {
            if folioOnly { return .nan }
            var environment = ProcessInfo.processInfo.environment
            environment["RCLONE_CONFIG_OURS_TYPE"] = "webdav"
            environment["RCLONE_CONFIG_OURS_URL"] = server.baseURL.absoluteString
            environment["RCLONE_CONFIG_OURS_VENDOR"] = "other"
            let started = ContinuousClock.now
            let output = try ProcessRunner.run(URL(fileURLWithPath: rclone), ["copy", from, to, "--config", "/dev/null", "-q"], environment: environment)
            guard output.status == 0 else { throw BenchmarkFailure("rclone copy \(from) \(to) failed: \(output.stderr.suffix(500))") }
            return seconds(since: started)
        }
        func timed(_ body: () async throws -> SyncReport) async throws -> (Double, SyncReport) {
            let started = ContinuousClock.now
            let report = try await body()
            guard report.deferred.isEmpty else { throw BenchmarkFailure("the sync pass deferred \(report.deferred.count) items: \(report.deferred.first!)") }
            return (seconds(since: started), report)
        }

        // Many small files: the same tree for both, in 100 folders.
        let (up, upPaths) = try await device("up", "folio")
        let source = scratch.child("source").path
        try writeTree(at: upPaths.driveDirectory, files: files, size: fileSize)
        try writeTree(at: source, files: files, size: fileSize)
        let (folioUp, uploaded) = try await timed { try await up.sync() }
        guard uploaded.uploaded == files else { throw BenchmarkFailure("uploaded \(uploaded.uploaded) of \(files)") }
        rows.append(Row(name: "upload \(files) × \(fileSize / 1024) KiB", folio: folioUp, rclone: try rcloneCopy(source, "ours:rclone")))
        let (folioAgain, again) = try await timed { try await up.sync() }
        guard again.uploaded == 0 else { throw BenchmarkFailure("a no-change pass uploaded \(again.uploaded)") }
        rows.append(Row(name: "no-change re-sync of \(files)", folio: folioAgain, rclone: try rcloneCopy(source, "ours:rclone")))
        let (down, _) = try await device("down", "folio")
        let (folioDown, downloaded) = try await timed { try await down.sync() }
        guard downloaded.downloaded == files else { throw BenchmarkFailure("downloaded \(downloaded.downloaded) of \(files)") }
        rows.append(Row(name: "download \(files) × \(fileSize / 1024) KiB", folio: folioDown, rclone: try rcloneCopy("ours:rclone", scratch.child("rclone-down").path)))
        for folder in ["up", "down", "source", "rclone-down"] { try? FileManager.default.removeItem(at: scratch.child(folder)) }

        // One large file.
        let (bigUp, bigPaths) = try await device("big-up", "folio-large")
        let largeSource = scratch.child("large-source").path
        try FileManager.default.createDirectory(atPath: bigPaths.driveDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: largeSource, withIntermediateDirectories: true)
        try writeLarge(at: bigPaths.driveDirectory + "/large.bin", size: largeSize)
        try writeLarge(at: largeSource + "/large.bin", size: largeSize)
        let (folioBigUp, _) = try await timed { try await bigUp.sync() }
        let label = largeSize >= 1 << 30 ? "\(largeSize >> 30) GiB" : "\(largeSize >> 20) MiB"
        rows.append(Row(name: "upload 1 × \(label)", folio: folioBigUp, rclone: try rcloneCopy(largeSource, "ours:rclone-large")))
        let (bigDown, _) = try await device("big-down", "folio-large")
        let (folioBigDown, _) = try await timed { try await bigDown.sync() }
        rows.append(Row(name: "download 1 × \(label)", folio: folioBigDown, rclone: try rcloneCopy("ours:rclone-large", scratch.child("rclone-large-down").path)))

        print("sync against rclone \(rcloneVersion(rclone)) (default flags) on one Apache mod_dav_fs server on loopback")
        for row in rows {
            let name = row.name.padding(toLength: 32, withPad: " ", startingAt: 0)
            print(name + String(format: "  Folio %8.2f s   rclone %8.2f s   rclone/Folio %5.2f×", row.folio, row.rclone, row.rclone / row.folio))
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `files` files of `size` bytes (distinct contents) in 100 folders below `root`.
    static func writeTree(at root: String, files: Int, size: Int) throws {
        var bytes = [UInt8](repeating: 0, count: size)
        for index in 0..<files {
            let folder = root + "/d\(index % 100)"
            if index < 100 { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            var seed = UInt64(index) &* 0x9E37_79B9_7F4A_7C15
            for position in bytes.indices {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1
                bytes[position] = UInt8(truncatingIfNeeded: seed >> 33)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: folder + "/f\(index).bin"))
        }
    }

    /// One file of `size` bytes, written 4 MiB at a time.
    static func writeLarge(at path: String, size: Int64) throws {
        guard let handle = FileHandle(forWritingAtPath: path) ?? (FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil) else {
            throw BenchmarkFailure("cannot write \(path)")
        }
        defer { try? handle.close() }
        var chunk = [UInt8](repeating: 0, count: 4 << 20)
        var written: Int64 = 0
        var seed: UInt64 = 42
        while written < size {
            for index in stride(from: 0, to: chunk.count, by: 8) {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1
                withUnsafeBytes(of: seed) { chunk.replaceSubrange(index..<(index + 8), with: $0) }
            }
            let count = Int(min(Int64(chunk.count), size - written))
            try handle.write(contentsOf: chunk[..<count])
            written += Int64(count)
        }
    }

    static func rcloneVersion(_ rclone: String) -> String {
        (try? ProcessRunner.run(URL(fileURLWithPath: rclone), ["version"]))?.stdout.split(separator: "\n").first.map(String.init) ?? "?"
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
