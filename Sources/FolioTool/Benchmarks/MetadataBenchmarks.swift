import Folio
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench metadata`: walking and querying a generated tree — the raw scanner and an
/// in-process `MetadataQuery` gathering it (in a child process, for its own peak memory) — beside
/// `find -printf '%s %T@ %p'` over the same tree, run in the same session.
enum MetadataBenchmarks {
    static func run(files: Int, rounds: Int) throws {
        try BenchmarkHarness.withScratchDirectory("metadata") { root in try run(files: files, rounds: rounds, root: root) }
    }

    private static func run(files: Int, rounds: Int, root: String) throws {
        let tree = root + "/tree"
        let generated = Date()
        BenchmarkTree.generate(tree, files: files)
        print("metadata: a tree of \(files) files in folders of 200, made in \(String(format: "%.1f", Date().timeIntervalSince(generated))) s; median of \(rounds) rounds (warm cache)")
        var harness = BenchmarkHarness(rounds: rounds)
        var sink = 0
        let find = ["/usr/bin/find", tree, "-printf", "%s %T@ %p\\n"]
        harness.duration(
            "DirectoryScanner walk (readdir + fstatat)", baselineName: "find -printf '%s %T@ %p' > /dev/null",
            work: { DirectoryScanner().scan(tree, visit: { sink &+= Int($0.status.size) + 1; return true }, skipped: { _, _ in }) },
            baseline: { BenchmarkTree.runQuietly(find) })
        harness.duration(
            "MetadataQuery gather, kMDItemFSName LIKE '*.pdf' (in process)", baselineName: "find -printf '%s %T@ %p' > /dev/null",
            work: { sink &+= gather(tree, "kMDItemFSName LIKE '*.pdf'") },
            baseline: { BenchmarkTree.runQuietly(find) })
        harness.report()
        // Peak memory of a gathering process of its own, against find's.
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let queryRSS = BenchmarkTree.peakRSS([executable, "query", "kMDItemFSName LIKE '*.pdf'", "--scope", tree])
        let findRSS = BenchmarkTree.peakRSS(find)
        print("peak RSS: folio query (all \(files / 10) results held) \(queryRSS / 1024) MB | baseline find \(findRSS / 1024) MB")
        if sink == 42 { print("") }
    }

    private static func gather(_ tree: String, _ format: String) -> Int {
        let query = MetadataQuery()
        query.predicate = try? MetadataPredicate(parsing: format)
        query.searchScopes = [tree]
        let done = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidFinishGathering, object: query, queue: nil) { _ in
            done.signal()
        }
        _ = query.start()
        done.wait()
        NotificationCenter.default.removeObserver(observer)
        let count = query.resultCount
        query.stop()
        return count
    }
}
