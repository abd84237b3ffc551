import Folio
import FolioSystem
import Foundation

extension IndexBenchmarks {
    /// `folio bench index --real-tree /usr`: the index on a tree nobody generated (small folders,
    /// names shared by thousands of files): the crawl and the daemon's peak memory against `find
    /// -printf`, name search through the daemon at limit 50 for substrings of the tree's own names
    /// and for `python` (thousands of matches) at limits 1 and 50 against `find -name`, and
    /// `folio search` process to process against a process that does nothing and, where
    /// installed, plocate's `locate` over a database of the same tree.
    static func runRealTree(_ tree: String, rounds: Int) throws {
        try BenchmarkHarness.withScratchDirectory("index-real") { root in try runRealTree(tree, rounds: rounds, root: root) }
    }

    private static func runRealTree(_ tree: String, rounds: Int, root: String) throws {
        var harness = BenchmarkHarness(rounds: rounds)
        let find = ["/usr/bin/find", tree, "-printf", "%s %T@ %p\\n"]
        let findSeconds = harness.medianSeconds { BenchmarkTree.runQuietly(find) }
        let daemon = try BenchmarkDaemon(root: root + "/daemon", environment: ["FOLIO_INDEX_CONTENT": "off"])
        defer { daemon.stop() }
        let engine = try DaemonCoordinationEngine(socketPath: daemon.socket, app: nil)
        defer { engine.disconnect() }
        let crawled = try crawl(tree, engine)
        print(
            "crawl of \(tree): \(crawled.items) items, every name indexed in \(String(format: "%.2f", crawled.names)) s (\(String(format: "%.2f", crawled.names / findSeconds))× find's time), \(crawled.typed) typed by content by \(String(format: "%.2f", crawled.seconds)) s (\(String(format: "%.2f", crawled.seconds / findSeconds))×), daemon peak RSS \(BenchmarkTree.residentPeak(pid: daemon.daemonPID) / 1024) MB | baseline find -printf: \(String(format: "%.2f", findSeconds)) s"
        )

        // Substrings of the tree's own names: three to six characters of 200 names at random.
        let names: [String] = BenchmarkTree.output(["/usr/bin/find", tree, "-printf", "%f\\n"]).split(separator: "\n").map(String.init)
            .filter { $0.count >= 3 }
        var generator = SystemRandomNumberGenerator()
        var needles: [String] = []
        for _ in 0..<200 {
            let name = Array(names.randomElement(using: &generator) ?? "usr")
            let length = min(name.count, Int.random(in: 3...6, using: &generator))
            let start = Int.random(in: 0...(name.count - length), using: &generator)
            needles.append(String(name[start..<start + length]))
        }
        var found = 0
        let search = needles.map { needle in
            timed { found += (try? engine.send(Search(text: needle, limit: 50)))?["items"]?.arrayValue?.count ?? 0 }
        }
        let slowest = zip(needles, search).sorted { $0.1 > $1.1 }.prefix(3).map { "\($0.0) \(String(format: "%.1f", Double($0.1) / 1e6)) ms" }
        print("slowest searches: " + slowest.joined(separator: ", "))
        let findName = needles.prefix(3).map { needle in timed { BenchmarkTree.runQuietly(["/usr/bin/find", tree, "-name", "*\(needle)*"]) } }
        harness.latency(
            "search <substring of a name> limit 50 (\(found / needles.count) results on average)", samples: search,
            baselineName: "find -name '*<text>*'", baselineSamples: findName)
        let matches = names.filter { $0.lowercased().contains("python") }.count
        let findPython = (0..<3).map { _ in timed { BenchmarkTree.runQuietly(["/usr/bin/find", tree, "-name", "*python*"]) } }
        for limit in [1, 50] {
            let samples = (0..<200).map { _ in timed { _ = try? engine.send(Search(text: "python", limit: limit)) } }
            harness.latency(
                "search python limit \(limit) (\(matches) names match)", samples: samples, baselineName: "find -name '*python*'",
                baselineSamples: findPython)
        }

        // Process to process: `folio search` as a person types it.
        // `folio` is the small front that answers `search` itself; `folio-tool` (this executable) is
        // the whole command, for the record.
        let front = daemon.executable.deletingLastPathComponent().appendingPathComponent("folio").path
        let folio = [front, "search", "--limit", "50"]
        // A front that fails (missing, not built) would be timed as a fast process: each run must
        // succeed for the figure to be printed.
        var failures = 0
        let processes = needles.prefix(40).map { needle in
            timed { if BenchmarkTree.runQuietly(folio + ["--", needle], environment: daemon.environment) != 0 { failures += 1 } }
        }
        let nothing = (0..<40).map { _ in timed { BenchmarkTree.runQuietly(["/bin/true"]) } }
        if failures == 0 {
            harness.latency("folio search <substring> (a process)", samples: processes, baselineName: "/bin/true (a process)", baselineSamples: nothing)
        } else {
            print("folio search (a process): \(failures) of \(processes.count) runs of \(front) failed; no figure (build it: swift build -c release --product folio)")
        }
        let tool = [daemon.executable.path, "search", "--limit", "50"]
        let toolProcesses = needles.prefix(40).map { needle in timed { BenchmarkTree.runQuietly(tool + ["--", needle], environment: daemon.environment) } }
        harness.latency("folio-tool search <substring> (a process)", samples: toolProcesses, baselineName: "/bin/true (a process)", baselineSamples: nothing)
        if let plocate = ExecutableSearch.locate("plocate"), let updatedbPath = ExecutableSearch.locate("updatedb") {
            let database = root + "/plocate.db"
            let updatedb = [updatedbPath, "-l", "0", "-U", tree, "-o", database]
            let updatedbSeconds = harness.medianSeconds { BenchmarkTree.runQuietly(updatedb) }
            print("plocate's updatedb of \(tree): \(String(format: "%.2f", updatedbSeconds)) s, \(String(format: "%.2f", updatedbSeconds / findSeconds))× find's time")
            let locate = needles.prefix(40).map { needle in
                timed { BenchmarkTree.runQuietly([plocate, "-d", database, "-i", "-l", "50", needle]) }
            }
            if failures == 0 {
                harness.latency("folio search <substring> (a process)", samples: processes, baselineName: "plocate -i -l 50 <substring>", baselineSamples: locate)
            }
        } else {
            print("plocate is not installed: scripts/bench-index installs it for the comparison")
        }
        harness.report()
    }

    /// Adds `tree` to the daemon's index and waits for it to be idle: the seconds until every name
    /// was indexed (the crawl), until every type was settled by content where the name leaves it
    /// open (idle, with text extraction off), and the items indexed and typed by content.
    static func crawl(_ tree: String, _ engine: DaemonCoordinationEngine) throws -> (names: Double, seconds: Double, items: Int, typed: Int) {
        let clock = ContinuousClock()
        let started = clock.now
        _ = try engine.send(IndexAdd(path: tree))
        var status = try engine.send(IndexStatus())
        var names: Duration?
        var typed = 0
        while status["state"]?.stringValue != "idle" {
            if names == nil, status["state"]?.stringValue != "crawling" {
                names = clock.now - started
                typed = Int(status["pending_types"]?.intValue ?? 0)
            }
            usleep(20_000)
            status = try engine.send(IndexStatus())
        }
        let seconds = clock.now - started
        return ((names ?? seconds) / .seconds(1), seconds / .seconds(1), Int(status["items"]?.intValue ?? 0), typed)
    }
}
