import Folio
import Foundation

/// `folio bench content --content-documents 100000`: search over the text of many documents. A
/// generated corpus (words of a made-up vocabulary of 30,000, drawn by Zipf's law as words of real
/// text are, 50 to 600 words a document) is indexed by a private daemon, text extraction on: the
/// time to idle and the daemon's peak memory, the index's size on disk against the text's; then
/// searches of names and text through the daemon (`search` with `content`, 50 results at most)
/// for common words, rare ones and pairs, against `grep -rlw` answering one word in the same run.
enum ContentSearchBenchmarks {
    static func run(documents: Int, rounds: Int) throws {
        try BenchmarkHarness.withScratchDirectory("content-search") { root in try run(documents: documents, rounds: rounds, root: root) }
    }

    private static func run(documents: Int, rounds: Int, root: String) throws {
        let tree = root + "/corpus"
        var generator = SystemRandomNumberGenerator()
        let vocabulary = makeVocabulary(30_000, &generator)
        // Zipf's law: the word of rank r is drawn with weight 1 / r.
        var cumulative: [Double] = []
        var sum = 0.0
        for rank in 1...vocabulary.count {
            sum += 1 / Double(rank)
            cumulative.append(sum)
        }
        func word() -> String {
            let target = Double.random(in: 0..<sum, using: &generator)
            var low = 0, high = cumulative.count - 1
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] < target { low = middle + 1 } else { high = middle }
            }
            return vocabulary[low]
        }
        var textBytes = 0
        for number in 0..<documents {
            let folder = "\(tree)/f\(number / 1000)"
            if number % 1000 == 0 { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            var text = ""
            for index in 0..<Int.random(in: 50...600, using: &generator) {
                text += word()
                text += index % 12 == 11 ? ".\n" : " "
            }
            textBytes += text.utf8.count
            try text.write(toFile: "\(folder)/d\(number).txt", atomically: false, encoding: .utf8)
        }
        print("content search: \(documents) documents, \(textBytes >> 20) MiB of text")

        var harness = BenchmarkHarness(rounds: rounds)
        let daemon = try BenchmarkDaemon(root: root + "/daemon")
        defer { daemon.stop() }
        let engine = try DaemonCoordinationEngine(socketPath: daemon.socket, app: nil)
        defer { engine.disconnect() }
        let crawled = try IndexBenchmarks.crawl(tree, engine)
        let database = root + "/daemon/state/folio/index.sqlite"
        let indexBytes = ["", "-wal", "-shm"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: database + suffix)[.size] as? Int) ?? 0)
        }
        print(
            String(
                format: "indexed with their text in %.1f s (%.0f documents/s), daemon peak RSS %d MB; index on disk %d MiB for %d MiB of text (%.2f×)",
                crawled.seconds, Double(documents) / crawled.seconds, BenchmarkTree.residentPeak(pid: daemon.daemonPID) / 1024, indexBytes >> 20,
                textBytes >> 20, Double(indexBytes) / Double(max(1, textBytes))))

        // Common words (by the law's weights), rare ones (any word of the vocabulary), and pairs.
        let common = (0..<100).map { _ in word() }
        let rare = (0..<100).map { _ in vocabulary.randomElement(using: &generator)! }
        let pairs = (0..<50).map { _ in word() + " " + word() }
        var hits = 0
        func searched(_ texts: [String]) -> [UInt64] {
            texts.map { text in
                IndexBenchmarks.timed { hits += (try? engine.send(Search(text: text, limit: 50, content: true)))?["items"]?.arrayValue?.count ?? 0 }
            }
        }
        let grep = (0..<max(1, min(rounds, 3))).map { index in
            IndexBenchmarks.timed { BenchmarkTree.runQuietly(["/usr/bin/grep", "-rlw", common[index], tree]) }
        }
        for (name, texts) in [("a common word", common), ("a rare word", rare), ("two words", pairs)] {
            hits = 0
            let samples = searched(texts)
            harness.latency(
                "search of names and text, \(name), limit 50 (\(hits / texts.count) results on average)", samples: samples,
                baselineName: "grep -rlw <common word>", baselineSamples: grep)
        }
        harness.report()
    }

    /// `count` distinct made-up words of two to four syllables.
    private static func makeVocabulary(_ count: Int, _ generator: inout SystemRandomNumberGenerator) -> [String] {
        let onsets = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "st", "tr", "ch", "sh"]
        let vowels = ["a", "e", "i", "o", "u", "ai", "ou", "ee"]
        var words = Set<String>()
        var ordered: [String] = []
        while ordered.count < count {
            let syllables = Int.random(in: 2...4, using: &generator)
            let word = (0..<syllables).map { _ in onsets.randomElement(using: &generator)! + vowels.randomElement(using: &generator)! }.joined()
            if words.insert(word).inserted { ordered.append(word) }
        }
        return ordered
    }
}
