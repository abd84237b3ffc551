import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Times a piece of work beside a baseline measured in the same run, and reports their ratio.
/// Figures are medians of several rounds; compare ratios, not absolute times, on shared machines.
struct BenchmarkHarness {
    /// One measured figure with its baseline.
    struct Row {
        var name: String
        var unit: String
        var value: Double
        var baselineName: String
        var baseline: Double
        /// How many times slower than the baseline (value is a rate: baseline / value; a time: value / baseline).
        var slowdown: Double
        /// For figures measured in alternating blocks: the lowest and highest block's ratio, and
        /// how many blocks (`slowdown` is then the median block's ratio).
        var spread: (low: Double, high: Double, blocks: Int)? = nil
    }

    var rounds: Int
    private(set) var rows: [Row] = []

    /// Returns the median wall time, in seconds, of `rounds` runs of `body`.
    func medianSeconds(_ body: () -> Void) -> Double {
        var samples: [Double] = []
        for _ in 0..<max(1, rounds) {
            let start = DispatchTime.now().uptimeNanoseconds
            body()
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    /// Measures a rate: `operations` done by each call of `work` and of `baseline`.
    mutating func rate(_ name: String, operations: Int, baselineName: String, work: () -> Void, baseline: () -> Void) {
        let t = medianSeconds(work)
        let b = medianSeconds(baseline)
        let rate = Double(operations) / t
        let baseRate = Double(operations) / b
        rows.append(Row(name: name, unit: "ops/s", value: rate, baselineName: baselineName, baseline: baseRate, slowdown: baseRate / rate))
    }

    /// Measures a duration of `work` against `baseline`.
    mutating func duration(_ name: String, baselineName: String, work: () -> Void, baseline: () -> Void) {
        let t = medianSeconds(work)
        let b = medianSeconds(baseline)
        rows.append(Row(name: name, unit: "ms", value: t * 1000, baselineName: baselineName, baseline: b * 1000, slowdown: t / b))
    }

    /// Records per-operation latencies (nanoseconds) of `work` and `baseline`, compared at the median
    /// (p50); p99 is printed beside it.
    mutating func latency(_ name: String, samples: [UInt64], baselineName: String, baselineSamples: [UInt64]) {
        let p50 = Self.percentile(samples, 0.5), base50 = Self.percentile(baselineSamples, 0.5)
        let p99 = Self.percentile(samples, 0.99), base99 = Self.percentile(baselineSamples, 0.99)
        rows.append(
            Row(
                name: "\(name) p50 (p99 \(String(format: "%.1f", p99 / 1000)) µs)", unit: "µs", value: p50 / 1000,
                baselineName: "\(baselineName) p50 (p99 \(String(format: "%.1f", base99 / 1000)) µs)", baseline: base50 / 1000,
                slowdown: p50 / base50))
    }

    /// Measures `work` and `baseline` (one operation each call) alternately, in `blocks` blocks of
    /// `count` operations, baseline first in each; records the median block's ratio of their
    /// `fraction` percentiles (p50 by default) with the min–max over the blocks. Alternating keeps
    /// a shared machine's drift from landing on one side only.
    mutating func alternated(
        _ name: String, blocks: Int, count: Int, fraction: Double = 0.5, baselineName: String, work: () -> Void, baseline: () -> Void
    ) {
        var values: [Double] = [], baselines: [Double] = []
        for _ in 0..<max(1, blocks) {
            baselines.append(Self.percentile(CoordinationBenchmarks.measure(count, baseline), fraction) / 1000)
            values.append(Self.percentile(CoordinationBenchmarks.measure(count, work), fraction) / 1000)
        }
        let label = fraction == 0.5 ? "p50" : "p\(Int(fraction * 100))"
        blockRatios("\(name) \(label)", unit: "µs", values: values, baselineName: "\(baselineName) \(label)", baselines: baselines)
    }

    /// Records figures measured in blocks beside their baselines measured in the same blocks: the
    /// medians, and the median block's ratio (value / baseline) with the min–max over the blocks.
    mutating func blockRatios(_ name: String, unit: String, values: [Double], baselineName: String, baselines: [Double]) {
        let ratios = zip(values, baselines).map { $0 / $1 }.sorted()
        guard !ratios.isEmpty else { return }
        func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
        rows.append(
            Row(
                name: name, unit: unit, value: median(values), baselineName: baselineName, baseline: median(baselines),
                slowdown: ratios[ratios.count / 2], spread: (ratios.first!, ratios.last!, ratios.count)))
    }

    /// Records a throughput against a baseline throughput, both in operations per second.
    mutating func throughput(_ name: String, rate: Double, baselineName: String, baselineRate: Double) {
        rows.append(Row(name: name, unit: "ops/s", value: rate, baselineName: baselineName, baseline: baselineRate, slowdown: baselineRate / rate))
    }

    /// The `fraction` percentile of `samples`.
    static func percentile(_ samples: [UInt64], _ fraction: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))])
    }

    /// A fresh scratch folder for one benchmark; `body` runs with its path, and it is removed after.
    static func withScratchDirectory<T>(_ name: String, _ body: (String) throws -> T) throws -> T {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-bench-\(name)-\(getpid())").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        return try body(root)
    }

    /// Prints the rows as a table.
    func report() {
        #if DEBUG
        print("warning: a debug build; run `swift run -c release folio bench …` for figures worth recording")
        #endif
        for row in rows {
            let value = Self.format(row.value), base = Self.format(row.baseline)
            var cost = "\(String(format: "%.2f", row.slowdown))× the baseline's cost"
            if let spread = row.spread {
                cost += " (median of \(spread.blocks) alternated blocks; \(String(format: "%.2f", spread.low))–\(String(format: "%.2f", spread.high))×)"
            }
            print("\(row.name): \(value) \(row.unit) | baseline \(row.baselineName): \(base) \(row.unit) | \(cost)")
        }
    }

    static func format(_ x: Double) -> String {
        if x >= 1e6 { return String(format: "%.2fM", x / 1e6) }
        if x >= 1e3 { return String(format: "%.1fk", x / 1e3) }
        return String(format: "%.3f", x)
    }
}
