import Folio
import FolioSystem
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench index --files 200000,1000000`: the daemon's index on generated trees — crawl time
/// and the daemon's peak memory against `find -printf '%s %T@ %p'`, name-substring search and an
/// attribute query at that size against `find` answering the same question, and the time from a
/// write (coordinated, then not) to the live query's `didUpdate` against the raw floors (a socket
/// round trip, an inotify event).
enum IndexBenchmarks {
    static func run(sizes: [Int], realTree: String?, rounds: Int) throws {
        if let realTree { try runRealTree(realTree, rounds: rounds) }
        for files in sizes {
            try BenchmarkHarness.withScratchDirectory("index-\(files)") { root in try run(files: files, rounds: rounds, root: root) }
        }
    }

    private static func run(files: Int, rounds: Int, root: String) throws {
        let tree = root + "/tree"
        let generated = Date()
        let newest = BenchmarkTree.generate(tree, files: files)
        print("index: a tree of \(files) files, made in \(String(format: "%.1f", Date().timeIntervalSince(generated))) s")
        var harness = BenchmarkHarness(rounds: rounds)
        let find = ["/usr/bin/find", tree, "-printf", "%s %T@ %p\\n"]
        let findSeconds = harness.medianSeconds { BenchmarkTree.runQuietly(find) }
        let findRSS = BenchmarkTree.peakRSS(find)

        // Names, types and dates: the crawl as it was measured before text extraction existed.
        let daemon = try BenchmarkDaemon(root: root + "/daemon", environment: ["FOLIO_INDEX_CONTENT": "off"])
        defer { daemon.stop() }
        let engine = try DaemonCoordinationEngine(socketPath: daemon.socket, app: nil)
        defer { engine.disconnect() }
        let crawled = try crawl(tree, engine)
        let (crawlSeconds, items) = (crawled.seconds, crawled.items)
        let daemonRSS = BenchmarkTree.residentPeak(pid: daemon.daemonPID)
        print(
            "crawl: \(items) items indexed in \(String(format: "%.2f", crawlSeconds)) s (\(Int(Double(items) / crawlSeconds)) items/s), daemon peak RSS \(daemonRSS / 1024) MB | baseline find -printf: \(String(format: "%.2f", findSeconds)) s, \(findRSS / 1024) MB | \(String(format: "%.2f", crawlSeconds / findSeconds))× find's time"
        )

        // Name substring: four hex digits of the names' hashes, through the daemon.
        var generator = SystemRandomNumberGenerator()
        let needles = (0..<200).map { _ in String(format: "%04x", Int.random(in: 0..<0xFFFF, using: &generator)) }
        var found = 0
        let search = needles.map { needle in
            timed { found += (try? engine.send(Search(text: needle, limit: 50)))?["items"]?.arrayValue?.count ?? 0 }
        }
        let findName = needles.prefix(3).map { needle in timed { BenchmarkTree.runQuietly(["/usr/bin/find", tree, "-name", "*\(needle)*"]) } }
        harness.latency(
            "search <4 hex digits> at \(items) rows (\(found / needles.count) hits each on average)", samples: search,
            baselineName: "find -name '*<text>*'", baselineSamples: findName)

        // An attribute query: the newest 0.1% of the documents by modification date, gathered by a
        // MetadataQuery the daemon runs.
        let cutoff = newest - Double(files) / 1000
        let format = "kMDItemFSContentChangeDate > %@ AND kMDItemContentType != 'public.folder'"
        let predicate = MetadataPredicate(format: format, argumentArray: [Date(timeIntervalSince1970: cutoff)])
        var results = 0
        let attribute = (0..<40).map { _ in timed { results = gather(predicate, tree, engine) } }
        let findNewer = (0..<3).map { _ in
            timed { BenchmarkTree.runQuietly(["/usr/bin/find", tree, "-newermt", "@\(String(format: "%.3f", cutoff))"]) }
        }
        harness.latency(
            "MetadataQuery gather, documents changed in the newest 0.1% (\(results) results) at \(items) rows", samples: attribute,
            baselineName: "find -newermt", baselineSamples: findNewer)

        // Write → didUpdate, coordinated and not, against the raw floors. The coordinated writes go
        // to a daemon that does not watch the file system, so only stitching can report them.
        let live = tree + "/live"
        try FileManager.default.createDirectory(atPath: live, withIntermediateDirectories: true)
        let uncoordinated = try updateLatencies(live, engine, coordinated: false)
        let stitching = try BenchmarkDaemon(root: root + "/stitching", environment: ["FOLIO_INDEX_WATCH": "off", "FOLIO_INDEX_CONTENT": "off"])
        defer { stitching.stop() }
        let stitchingEngine = try DaemonCoordinationEngine(socketPath: stitching.socket, app: nil)
        defer { stitchingEngine.disconnect() }
        let stitched = root + "/stitched"
        try FileManager.default.createDirectory(atPath: stitched, withIntermediateDirectories: true)
        _ = try stitchingEngine.send(IndexAdd(path: stitched))
        while try stitchingEngine.send(IndexStatus())["state"]?.stringValue != "idle" { usleep(10_000) }
        let coordinated = try updateLatencies(stitched, stitchingEngine, coordinated: true)
        let pingPong = try PingPong(socket: daemon.echoSocket, requestSize: 200)
        let roundTrips = (0..<coordinated.count).map { _ in timed { pingPong.roundTrip() } }
        harness.latency("coordinated write → didUpdate", samples: coordinated, baselineName: "raw socket round trip", baselineSamples: roundTrips)
        harness.latency(
            "uncoordinated write → didUpdate", samples: uncoordinated, baselineName: "write → inotify event in process",
            baselineSamples: try inotifyLatencies(live, count: uncoordinated.count))
        harness.report()
    }

    static func timed(_ body: () -> Void) -> UInt64 {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return DispatchTime.now().uptimeNanoseconds - start
    }

    private static func gather(_ predicate: MetadataPredicate, _ tree: String, _ engine: DaemonCoordinationEngine) -> Int {
        let query = MetadataQuery()
        query.predicate = predicate
        query.searchScopes = [tree]
        let done = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidFinishGathering, object: query, queue: nil) { _ in
            done.signal()
        }
        _ = CoordinationEngine.$override.withValue(engine) { query.start() }
        done.wait()
        NotificationCenter.default.removeObserver(observer)
        let count = query.resultCount
        query.stop()
        return count
    }

    /// Times from the end of a write to the live query's `didUpdate` naming the file: coordinated
    /// writes (the daemon stitches them in at release), or plain ones (inotify).
    private static func updateLatencies(_ folder: String, _ engine: DaemonCoordinationEngine, coordinated: Bool) throws -> [UInt64] {
        let query = MetadataQuery()
        query.predicate = MetadataPredicate(format: "kMDItemFSName BEGINSWITH 'w-'")
        query.searchScopes = [folder]
        query.notificationBatchingInterval = 0
        let arrivals = Mutex<[String: UInt64]>([:])
        let arrived = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidUpdate, object: query, queue: nil) { note in
            let now = DispatchTime.now().uptimeNanoseconds
            for item in note.userInfo?[NSMetadataQueryUpdateAddedItemsKey] as? [MetadataItem] ?? [] {
                guard let name = item.value(forAttribute: NSMetadataItemFSNameKey) as? String else { continue }
                arrivals.withLock { $0[name] = now }
                arrived.signal()
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let gathered = DispatchSemaphore(value: 0)
        let gatherObserver = NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidFinishGathering, object: query, queue: nil) { _ in
            gathered.signal()
        }
        _ = CoordinationEngine.$override.withValue(engine) { query.start() }
        gathered.wait()
        NotificationCenter.default.removeObserver(gatherObserver)
        defer { query.stop() }
        let coordinator = CoordinationEngine.$override.withValue(engine) { FileCoordinator() }
        var samples: [UInt64] = []
        for index in 0..<300 {
            let name = "w-\(index).txt"
            let path = folder + "/" + name
            // The clock starts at the end of a coordinated write's accessor (before the claim is
            // released), and before an uncoordinated create.
            var written = DispatchTime.now().uptimeNanoseconds
            if coordinated {
                var error: NSError?
                coordinator.coordinate(writingItemAt: URL(fileURLWithPath: path), options: [], error: &error) { url in
                    try? Data("x".utf8).write(to: url)
                    written = DispatchTime.now().uptimeNanoseconds
                }
            } else {
                // From before the create: the file appears at open.
                close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644))
            }
            while arrived.wait(timeout: .now() + 2) == .success {
                if let at = arrivals.withLock({ $0[name] }) {
                    samples.append(at > written ? at - written : 0)
                    break
                }
            }
        }
        return samples
    }

    /// The floor of an uncoordinated update: from creating a file to an inotify watch in this
    /// process reporting it.
    private static func inotifyLatencies(_ folder: String, count: Int) throws -> [UInt64] {
        let seen = Mutex<[String: UInt64]>([:])
        let arrived = DispatchSemaphore(value: 0)
        // The handler form, as the arbiter uses it: events are handled on the watcher's thread.
        let watcher = try InotifyWatcher(logger: Logger(label: "folio.bench")) { events in
            let now = DispatchTime.now().uptimeNanoseconds
            for case .created(let path) in events { seen.withLock { $0[path] = now } }
            arrived.signal()
        }
        defer { watcher.stop() }
        watcher.watch(folder)
        var samples: [UInt64] = []
        for index in 0..<count {
            let name = "i-\(index).txt"
            let start = DispatchTime.now().uptimeNanoseconds
            close(open(folder + "/" + name, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644))
            while arrived.wait(timeout: .now() + 2) == .success {
                if let at = seen.withLock({ $0[folder + "/" + name] }) {
                    samples.append(at - start)
                    break
                }
            }
        }
        return samples
    }
}

/// Generated trees for the metadata and index benchmarks, and the tools to time `find` on them.
enum BenchmarkTree {
    /// Folders of 200 files named `doc<n>-<5 hex digits>.txt` (every tenth `.pdf`), under folders of
    /// 100 folders; modification times one second apart. Returns the newest time.
    @discardableResult
    static func generate(_ tree: String, files: Int, perFolder: Int = 200) -> Double {
        let base = Date().timeIntervalSince1970 - Double(files)
        for folder in 0..<((files + perFolder - 1) / perFolder) {
            let path = "\(tree)/g\(folder / 100)/f\(folder)"
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for file in 0..<min(perFolder, files - folder * perFolder) {
                let number = folder * perFolder + file
                let hash = (UInt64(number) &* 0x9E37_79B9_7F4A_7C15) >> 44
                let name = "\(path)/doc\(number)-\(String(hash, radix: 16))\(number % 10 == 0 ? ".pdf" : ".txt")"
                let fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
                let seconds = base + Double(number)
                var times = [
                    timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0),
                ]
                _ = futimens(fd, &times)
                close(fd)
            }
        }
        return base + Double(files - 1)
    }

    /// Runs `command` (an absolute path and its arguments) to its end, its output discarded;
    /// returns its exit status (nil when it could not be started).
    @discardableResult
    static func runQuietly(_ command: [String], environment: [String: String]? = nil) -> Int32? {
        SpawnedProcess.run(command, environment: environment)
    }

    /// What `command` prints.
    static func output(_ command: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The peak resident set of `command`, in KiB: its `VmHWM`, read while it runs (`ru_maxrss`
    /// would count the spawning process's memory, which a child inherits at exec).
    static func peakRSS(_ command: [String]) -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return 0 }
        var peak = 0
        while process.isRunning {
            peak = max(peak, residentPeak(pid: process.processIdentifier))
            usleep(2000)
        }
        return peak
    }

    /// A running process's `VmHWM` (its peak resident set so far), in KiB.
    static func residentPeak(pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}
