import ArgumentParser

/// `folio bench <name>`: benchmarks, each printing its figure beside a same-run baseline.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a benchmark (build with -c release for figures worth recording)."
    )

    @Argument(help: "The benchmark: types, coordination, documents, bookmarks, metadata.")
    var name: String
    @Option(help: "Operations per round for rate benchmarks.")
    var iterations = 1_000_000
    @Option(help: "Rounds; the median is reported.")
    var rounds = 7
    @Option(help: "Seconds per throughput run (coordination).")
    var seconds = 2.0
    @Option(help: "Files in the generated tree (metadata).")
    var files = 200_000

    func run() throws {
        switch name {
        case "types": TypeBenchmarks.run(iterations: iterations, rounds: rounds)
        case "coordination": try CoordinationBenchmarks.run(iterations: min(iterations, 20_000), seconds: seconds)
        case "documents": try DocumentBenchmarks.run(rounds: rounds)
        case "bookmarks": try BookmarkBenchmarks.run(iterations: iterations, rounds: rounds)
        case "metadata": try MetadataBenchmarks.run(files: files, rounds: rounds)
        default: throw ValidationError("unknown benchmark \(name); available: types, coordination, documents, bookmarks, metadata")
        }
    }
}
