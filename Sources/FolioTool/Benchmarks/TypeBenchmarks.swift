import Folio
import Foundation
import UniformTypes

/// `folio bench types`: type lookups and database loading against same-run baselines.
enum TypeBenchmarks {
    static func run(iterations: Int, rounds: Int) {
        var harness = BenchmarkHarness(rounds: rounds)
        let configuration = TypeRegistry.Configuration.standard()
        let firstStart = DispatchTime.now().uptimeNanoseconds
        let registry = TypeRegistry(configuration: configuration)
        let firstLoad = Double(DispatchTime.now().uptimeNanoseconds - firstStart) / 1e6
        print("types known: \(registry.typeCount) (built-in table + shared-mime-info from \(configuration.mimeDirectories.joined(separator: ":")))")
        // One sample, so no baseline: the process's first registry also parses the built-in table.
        print("first registry in this process, built-in table parse included (one sample): \(String(format: "%.3f", firstLoad)) ms")

        // 1. Start-up: build a registry from shared-mime-info vs only reading the same files' bytes.
        let files = configuration.mimeDirectories.flatMap { dir in ["types", "globs2", "subclasses", "aliases"].map { dir + "/" + $0 } }
        var sink = 0
        harness.duration(
            "load registry (built-in + shared-mime-info)", baselineName: "read the 4 database files",
            work: { sink &+= TypeRegistry(configuration: configuration).typeCount },
            baseline: { for f in files { sink &+= FileManager.default.contents(atPath: f)?.count ?? 0 } })

        // 2. Type for extension vs a plain dictionary from extension to identifier.
        let extensions = ["jpg", "png", "pdf", "txt", "JPG", "docx", "xyzzy", "tar", "gz", "mp3", "swift", "html", "json", "md", "zip", "odt"]
        var table: [String: String] = [:]
        for ext in extensions { table[ext.lowercased()] = registry.type(tag: ext, tagClass: .filenameExtension)?.identifier ?? "" }
        let data = UTType.data
        harness.rate(
            "UTType(filenameExtension:)", operations: iterations, baselineName: "Dictionary<String, String> lookup",
            work: {
                for i in 0..<iterations {
                    sink &+= registry.type(tag: extensions[i & 15], tagClass: .filenameExtension, conformingTo: data)?.identifier.utf8.count ?? 0
                }
            },
            baseline: {
                for i in 0..<iterations { sink &+= table[extensions[i & 15].lowercased()]?.utf8.count ?? 0 }
            })

        // 3. A file's type by its whole name (shared-mime-info's globs, as content detection and the
        // index read names) vs by its extension alone; names as real trees have them.
        let names = [
            "README", "Makefile", "index.html", "photo.JPG", "archive.tar.gz", "notes.txt", "libfoo.so.6", "main.c", "page.1", "Cargo.toml",
            "changelog.Debian.gz", "copyright", "setup.py", "icon.svg", "data.bin", "report.pdf",
        ]
        harness.rate(
            "UTType.named (globs)", operations: iterations, baselineName: "UTType.ofFile(named:) (extension)",
            work: { for i in 0..<iterations { if UTType.named(names[i & 15]).decided { sink &+= 1 } } },
            baseline: { for i in 0..<iterations { sink &+= UTType.ofFile(named: names[i & 15]).identifier.utf8.count } })

        // 4. Conformance vs a Set<String> membership test on precomputed supertype names.
        let pairs: [(UTType, UTType)] = [
            (.jpeg, .image), (.jpeg, .data), (.pdf, .compositeContent), (.json, .text), (.png, .audio),
            (.zip, .archive), (.mp3, .audiovisualContent), (.html, .plainText),
        ]
        let sets = pairs.map { (Set($0.0.supertypes.map(\.identifier)), $0.1.identifier) }
        harness.rate(
            "UTType.conforms(to:)", operations: iterations, baselineName: "Set<String>.contains",
            work: { for i in 0..<iterations { let p = pairs[i & 7]; if p.0.conforms(to: p.1) { sink &+= 1 } } },
            baseline: { for i in 0..<iterations { let p = sets[i & 7]; if p.0.contains(p.1) { sink &+= 1 } } })

        harness.report()
        if sink == 42 { print("") }  // keeps the work observable
    }
}
