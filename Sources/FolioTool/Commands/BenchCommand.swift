import ArgumentParser
import FolioSync
import Foundation

/// `folio bench <name>`: benchmarks, each printing its figure beside a same-run baseline.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a benchmark (build with -c release for figures worth recording)."
    )

    @Argument(help: "The benchmark: types, wire, coordination, stall, documents, bookmarks, metadata, index, content, sync, mount, web.")
    var name: String
    @Option(help: "Operations per round for rate benchmarks.")
    var iterations = 1_000_000
    @Option(help: "Rounds; the median is reported.")
    var rounds = 7
    @Option(help: "Seconds per throughput run (coordination).")
    var seconds = 2.0
    @Option(help: "Files in the generated tree (metadata).")
    var files = 200_000
    @Option(help: "Entries in the tree a bookmark resolution searches (stall).")
    var entries = 50_000
    @Option(help: "Files in each generated tree, comma-separated (index).")
    var sizes = "200000,1000000"
    @Option(help: "A real tree indexed before the generated ones (index; empty for none).") var realTree = "/usr"

    @Option(help: "Files in the folder whose first screen is timed (web).") var webFolder = 100_000
    @Option(help: "Files indexed for search as you type (web).") var webIndexed = 1_000_000
    @Option(help: "Small files (sync).") var syncFiles = 10_000
    @Option(help: "The size of each small file (sync).") var syncFileSize = 4096
    @Option(help: "The large file's size, in bytes or with K, M or G (sync).") var syncLarge = "1G"
    @Flag(help: ArgumentHelp("Time Folio only, not the baselines (sync; for profiling).", visibility: .hidden)) var syncFolioOnly = false
    @Option(help: "Entries in the tree stat'ed through the mount (mount; its large file is --sync-large).") var mountFiles = 100_000
    @Option(help: "The folder whose documents' text is read (content).") var contentCorpus = "/usr/share/doc"
    @Option(help: "Generated documents searched by their text (content; 0 for none).") var contentDocuments = 100_000
    @Option(help: "The rclone to compare with (sync, mount; default: .venv-bench/bin/rclone, then PATH's).") var rclone: String?

    func run() async throws {
        switch name {
        case "sync":
            guard let large = ByteCount.parse(syncLarge) else { throw ValidationError("--sync-large: “\(syncLarge)” is not a size") }
            try await SyncBenchmarks.run(files: syncFiles, fileSize: syncFileSize, largeSize: large, rounds: min(rounds, 3), rclonePath: rclone, folioOnly: syncFolioOnly)
        case "mount":
            guard let large = ByteCount.parse(syncLarge) else { throw ValidationError("--sync-large: “\(syncLarge)” is not a size") }
            // Mounts, spawns and waits: on the pool for blocking work, not the cooperative pool.
            let (files, rounds) = (mountFiles, min(rounds, 5))
            try await SyncFileWork.run { try MountBenchmarks.run(files: files, largeSize: large, rounds: rounds) }
            try await MountBenchmarks.runOnServer(rounds: min(rounds, 5), largeSize: min(large, 256 << 20), rclonePath: rclone)
        case "web": try await WebBenchmarks.run(folderEntries: webFolder, indexed: webIndexed, rounds: min(rounds, 5))
        case "types": TypeBenchmarks.run(iterations: iterations, rounds: rounds)
        case "wire": WireBenchmarks.run(iterations: min(iterations, 200_000), rounds: rounds)
        case "coordination": try CoordinationBenchmarks.run(iterations: min(iterations, 20_000), seconds: seconds)
        case "stall": try StallBenchmarks.run(samples: min(iterations, 5_000), rounds: min(rounds, 5), entries: entries)
        case "documents": try DocumentBenchmarks.run(rounds: rounds)
        case "bookmarks": try BookmarkBenchmarks.run(iterations: iterations, rounds: rounds)
        case "metadata": try MetadataBenchmarks.run(files: files, rounds: rounds)
        case "index":
            let counts = sizes.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.filter { $0 > 0 }
            guard !counts.isEmpty || !realTree.isEmpty else { throw ValidationError("--sizes takes file counts such as 200000,1000000") }
            try IndexBenchmarks.run(sizes: counts, realTree: realTree.isEmpty ? nil : realTree, rounds: min(rounds, 3))
        case "content":
            try ContentBenchmarks.run(corpus: contentCorpus, rounds: min(rounds, 3))
            if contentDocuments > 0 { try ContentSearchBenchmarks.run(documents: contentDocuments, rounds: min(rounds, 3)) }
        default: throw ValidationError("unknown benchmark \(name); available: types, wire, coordination, stall, documents, bookmarks, metadata, index, content, sync, mount, web")
        }
    }
}
