import Folio
import FolioDaemon
import FolioSystem
import Foundation
import SystemPackage

/// `folio bench content`: the content index's text extraction over a corpus nobody here wrote (the
/// machine's `/usr/share/doc`: text, HTML, and whatever PDFs and office files it holds; compressed
/// changelogs left out), through the sandboxed workers the daemon uses (two side by side), beside the same files read
/// by the extractor tools alone (the bytes read for text and markup, `pdftotext` and `unzip -p`
/// run on each PDF and office file), in the same run.
enum ContentBenchmarks {
    static func run(corpus: String, rounds: Int) throws {
        var files: [(String, TextExtractor.Format)] = []
        var bytes = 0
        let walker = FileManager.default.enumerator(atPath: corpus)
        while let relative = walker?.nextObject() as? String {
            let path = corpus + "/" + relative
            guard !path.hasSuffix(".gz"), let status = try? FileStatus(path: .init(path)), status.kind == .regular,
                let type = try? UTType.contentType(ofItemAt: URL(fileURLWithPath: path)).type, let format = TextExtractor.format(of: type)
            else { continue }
            files.append((path, format))
            bytes += Int(status.size)
        }
        let byFormat = Dictionary(grouping: files, by: { $0.1.rawValue }).mapValues(\.count).sorted { $0.value > $1.value }
        print("content: \(files.count) documents in \(corpus) (\(bytes >> 20) MiB; " + byFormat.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")")
        guard !files.isEmpty, let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return }

        let harness = BenchmarkHarness(rounds: rounds)
        var text = 0
        var failed = 0
        let workers = TextExtractionWorkers(executable: executable)
        defer { workers.stop() }
        let folio = harness.medianSeconds {
            text = 0
            failed = 0
            // In batches of 32, as the daemon's extraction pass sends them.
            for start in stride(from: 0, to: files.count, by: 32) {
                for result in workers.texts(of: files[start..<min(start + 32, files.count)].map { ($0.0, $0.1) }) {
                    if case .success(let extracted)? = result { text += extracted.utf8.count } else { failed += 1 }
                }
            }
        }
        // The same extraction code in this process, no worker: what the worker's round trips cost.
        let inProcess = harness.medianSeconds {
            for (path, format) in files { _ = TextExtraction.reply(format: format.rawValue, path: path) }
        }
        let pdftotext = ExecutableSearch.locate("pdftotext"), unzip = ExecutableSearch.locate("unzip")
        let tools = harness.medianSeconds {
            for (path, format) in files {
                switch format {
                case .pdf: if let pdftotext { BenchmarkTree.runQuietly([pdftotext, "-q", "-enc", "UTF-8", path, "-"]) }
                case .openDocument, .wordDocument, .presentation, .spreadsheet, .epub: if let unzip { BenchmarkTree.runQuietly([unzip, "-p", path]) }
                default: _ = try? FilePath(path).readRegularFilePrefix(limit: 64 << 20)
                }
            }
        }
        let megabytes = Double(text) / 1_048_576
        print(
            String(
                format: "extraction: %.0f documents/s, %.1f MB of text/s (%d failed or refused; the same code in process, no worker: %.0f documents/s) | baseline the tools alone: %.0f documents/s | %.2f× the tools' time",
                Double(files.count) / folio, megabytes / folio, failed, Double(files.count) / inProcess, Double(files.count) / tools, folio / tools))
        if ExecutableSearch.locate("tracker3") == nil {
            print("Tracker 3: not installed here (Debian's tracker and tracker-extract): no Tracker figure in this run")
        }
    }
}
