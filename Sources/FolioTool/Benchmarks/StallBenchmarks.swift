import Folio
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench stall`: whether slow requests of some clients hold up the coordinations of
/// another. Eight processes send slow requests without pause (four resolve a bookmark whose item is
/// gone, so each resolution searches a 50,000-entry tree; four sniff the content type of large
/// files) while this process coordinates writes through the same daemon. The figure is the
/// coordinations' p99 under that load against their p99 with the daemon idle, measured in
/// alternating rounds in the same run.
enum StallBenchmarks {
    static func run(samples: Int, rounds: Int, entries: Int) throws {
        try BenchmarkHarness.withScratchDirectory("stall") { root in try run(samples: samples, rounds: rounds, entries: entries, root: root) }
    }

    private static func run(samples: Int, rounds: Int, entries: Int, root: String) throws {
        let tree = root + "/docs"
        let folders = max(1, entries / 1000)
        for folder in 0..<folders {
            let path = "\(tree)/f\(folder)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for file in 0..<(entries / folders) { close(open("\(path)/n\(file).txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)) }
        }
        // Large files whose names say nothing: their content decides the type.
        var blobs: [String] = []
        for index in 0..<4 {
            let path = "\(root)/blob-\(index)"
            var bytes = [UInt8](repeating: 0, count: 16 << 20)
            for i in stride(from: 0, to: bytes.count, by: 4096) { bytes[i] = UInt8(truncatingIfNeeded: i / 4096 &* 31 &+ index) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            blobs.append(path)
        }
        // The daemon as built, and beside it the same daemon with every handler on one event
        // loop (as it was before handlers declared where they run): the same load on both.
        let built = try Subject(name: "daemon", root: root + "/daemon", environment: [:], bookmarkOf: tree + "/gone.txt")
        defer { built.stop() }
        let inline = try Subject(
            name: "the same daemon, handlers inline on one loop", root: root + "/inline", environment: ["FOLIO_DAEMON_INLINE_REQUESTS": "1"],
            bookmarkOf: tree + "/gone.txt")
        defer { inline.stop() }
        let file = root + "/coordinated.txt"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        print(
            "stall: \(samples) coordinated writes per phase, \(rounds) rounds of idle then loaded; load: 4 processes resolving a bookmark "
                + "over \(folders * (entries / folders)) entries, 4 sniffing 16 MiB files")
        for round in 0..<rounds {
            for subject in [built, inline] {
                try subject.round(round, samples: samples, file: URL(fileURLWithPath: file), blobs: blobs, root: root)
            }
        }
        var harness = BenchmarkHarness(rounds: rounds)
        for subject in [built, inline] {
            harness.blockRatios(
                "\(subject.name): coordinated write p99 with 8 processes sending slow requests", unit: "µs", values: subject.loaded99,
                baselineName: "the same, idle", baselines: subject.idle99)
            harness.blockRatios(
                "\(subject.name): coordinated write p50 with 8 processes sending slow requests", unit: "µs", values: subject.loaded50,
                baselineName: "the same, idle", baselines: subject.idle50)
        }
        harness.report()
        for subject in [built, inline] {
            print("\(subject.name): slow requests answered meanwhile: \(subject.answered); coordinations measured under load per round: \(subject.measured)")
        }
    }

    /// One daemon under test, with its figures.
    private final class Subject {
        let name: String
        let daemon: BenchmarkDaemon
        let engine: DaemonCoordinationEngine
        let bookmarkFile: String
        var idle50: [Double] = [], idle99: [Double] = [], loaded50: [Double] = [], loaded99: [Double] = []
        var answered = 0
        /// Coordinations measured under load in each round (fewer than asked when 20 s ran out).
        var measured: [Int] = []

        /// Starts the daemon and makes the bookmark of a document that then goes.
        init(name: String, root: String, environment: [String: String], bookmarkOf gone: String) throws {
            self.name = name
            daemon = try BenchmarkDaemon(root: root, environment: environment)
            engine = try DaemonCoordinationEngine(socketPath: daemon.socket, app: nil)
            _ = FileManager.default.createFile(atPath: gone, contents: Data("x".utf8))
            let bookmark = try engine.send(BookmarkCreate(path: gone, options: 0, keys: [], base: nil)).data
            try FileManager.default.removeItem(atPath: gone)
            bookmarkFile = root + "/bookmark.b64"
            try Data(bookmark.utf8).write(to: URL(fileURLWithPath: bookmarkFile))
        }

        /// Coordinated writes with the daemon idle, then under the eight processes' slow requests.
        func round(_ round: Int, samples: Int, file url: URL, blobs: [String], root: String) throws {
            var error: NSError?
            let write = { FileCoordinator(filePresenter: nil, engine: self.engine).coordinate(writingItemAt: url, options: [], error: &error) { _ in } }
            let quiet = CoordinationBenchmarks.measure(samples, write)
            idle50.append(BenchmarkHarness.percentile(quiet, 0.5) / 1000)
            idle99.append(BenchmarkHarness.percentile(quiet, 0.99) / 1000)

            let stopFile = "\(root)/stop-\(round)-\(ObjectIdentifier(self).hashValue)"
            let workers = try (0..<8).map { index in
                let (kind, target) = index % 2 == 0 ? ("bookmark", bookmarkFile) : ("sniff", blobs[index / 2])
                return try Child(
                    daemon.executable, ["bench-worker", "slow", kind, daemon.socket, target, stopFile], environment: daemon.environment,
                    captureOutput: true)
            }
            // The load is on once the daemon lists the workers among its clients.
            let deadline = Date().addingTimeInterval(30)
            while ((try? engine.send(DaemonStatus()))?["clients"]?.arrayValue?.count ?? 0) < 9, Date() < deadline { usleep(20_000) }
            usleep(300_000)
            // At most 20 s: behind slow requests on one loop, each coordination can wait seconds.
            var busy: [UInt64] = []
            let end = DispatchTime.now().uptimeNanoseconds + 20_000_000_000
            while busy.count < samples, DispatchTime.now().uptimeNanoseconds < end {
                let start = DispatchTime.now().uptimeNanoseconds
                write()
                busy.append(DispatchTime.now().uptimeNanoseconds - start)
            }
            measured.append(busy.count)
            loaded50.append(BenchmarkHarness.percentile(busy, 0.5) / 1000)
            loaded99.append(BenchmarkHarness.percentile(busy, 0.99) / 1000)
            _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
            for worker in workers { answered += Int(worker.waitForOutput().trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 }
            if let error { throw error }
        }

        func stop() {
            engine.disconnect()
            daemon.stop()
        }
    }
}
