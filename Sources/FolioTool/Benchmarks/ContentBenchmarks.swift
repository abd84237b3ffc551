import Folio
import FolioDaemon
import FolioSystem
import Foundation
import SystemPackage

/// `folio bench content`: the content index's text extraction over a corpus nobody here wrote (the
/// machine's `/usr/share/doc`: text, HTML, and whatever PDFs and office files it holds; compressed
/// changelogs left out) and ODT, DOCX and PDF files LibreOffice makes from text the benchmark
/// writes (where LibreOffice is installed: `scripts/bench-content` installs it), through the
/// sandboxed workers the daemon uses (two side by side), beside the same files read by the
/// extractor tools alone (the bytes read for text and markup, `pdftotext` and `unzip -p` run on
/// each PDF and office file) and, where Tracker 3 is installed, a sample read by its extractor, in
/// the same run.
enum ContentBenchmarks {
    static func run(corpus: String, rounds: Int) throws {
        try BenchmarkHarness.withScratchDirectory("content") { root in try run(corpus: corpus, rounds: rounds, root: root) }
    }

    private static func run(corpus: String, rounds: Int, root: String) throws {
        var files: [(String, TextExtractor.Format)] = []
        var bytes = 0
        let office = officeFiles(in: root + "/office", count: 100, profile: root + "/libreoffice")
        for folder in [corpus] + (office ? [root + "/office"] : []) {
            let walker = FileManager.default.enumerator(atPath: folder)
            while let relative = walker?.nextObject() as? String {
                let path = folder + "/" + relative
                guard !path.hasSuffix(".gz"), let status = try? FileStatus(path: .init(path)), status.kind == .regular,
                    let type = try? UTType.contentType(ofItemAt: URL(fileURLWithPath: path)).type, let format = TextExtractor.format(of: type)
                else { continue }
                files.append((path, format))
                bytes += Int(status.size)
            }
        }
        let byFormat = Dictionary(grouping: files, by: { $0.1.rawValue }).mapValues(\.count).sorted { $0.value > $1.value }
        print("content: \(files.count) documents in \(corpus)\(office ? " and made by LibreOffice" : " (LibreOffice is not installed: none made)") (\(bytes >> 20) MiB; " + byFormat.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")")
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
        if let tracker = trackerRate(files.map(\.0), root: root + "/tracker") {
            print(
                String(
                    format: "Tracker 3's extractor (tracker-extract-3 --file, a process a file, its command-line mode) on %d of the files: %.0f documents/s | Folio %.0f× its rate",
                    tracker.files, tracker.rate, Double(files.count) / folio / tracker.rate))
        } else {
            print("Tracker 3: not installed here (Debian's tracker-extract and dbus; scripts/bench-content installs them): no Tracker figure in this run")
        }
    }

    /// Makes ODT, DOCX and PDF files of `count` generated texts each in `folder` with LibreOffice
    /// (`soffice --headless --convert-to`); false when LibreOffice is not installed or failed.
    private static func officeFiles(in folder: String, count: Int, profile: String) -> Bool {
        guard let soffice = ExecutableSearch.locate("soffice"), (try? FileManager.default.createDirectory(atPath: folder + "/text", withIntermediateDirectories: true)) != nil
        else { return false }
        let words = ["budget", "quarterly", "report", "meeting", "figures", "minutes", "holiday", "garden", "letter", "weather", "invoice", "river"]
        var generator = SystemRandomNumberGenerator()
        var sources: [String] = []
        for number in 0..<count {
            let text = (0..<300).map { index in words.randomElement(using: &generator)! + (index % 15 == 14 ? ".\n" : " ") }.joined()
            let path = "\(folder)/text/document\(number).txt"
            guard (try? text.write(toFile: path, atomically: false, encoding: .utf8)) != nil else { return false }
            sources.append(path)
        }
        for format in ["odt", "docx", "pdf"] {
            let status = SpawnedProcess.run(
                [soffice, "--headless", "-env:UserInstallation=file://" + profile, "--convert-to", format, "--outdir", folder] + sources)
            guard status == 0 else { return false }
        }
        try? FileManager.default.removeItem(atPath: folder + "/text")
        return true
    }

    /// Tracker 3's extractor over a sample of `files` (200, spread over the list), one
    /// `tracker-extract-3 --file` process a file inside a private D-Bus session: documents/s, or
    /// nil when Tracker or D-Bus is not installed.
    private static func trackerRate(_ files: [String], root: String) -> (files: Int, rate: Double)? {
        guard let session = ExecutableSearch.locate("dbus-run-session"), FileManager.default.isExecutableFile(atPath: "/usr/libexec/tracker-extract-3"),
            (try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)) != nil
        else { return nil }
        let step = max(1, files.count / 200)
        let sample = stride(from: 0, to: files.count, by: step).map { files[$0] }
        var environment = ProcessInfo.processInfo.environment
        for key in ["HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"] { environment[key] = root }
        let script = "for f in \"$@\"; do /usr/libexec/tracker-extract-3 --file \"$f\" --output-format turtle; done"
        let started = ContinuousClock.now
        guard SpawnedProcess.run([session, "--", "/bin/sh", "-c", script, "sh"] + sample, environment: environment) == 0 else { return nil }
        return (sample.count, Double(sample.count) / ((ContinuousClock.now - started) / .seconds(1)))
    }
}
