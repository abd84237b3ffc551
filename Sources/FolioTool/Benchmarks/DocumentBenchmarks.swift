import Folio
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench documents`: `Document` saves of 1 KiB and 10 MiB against a raw temp + fsync + rename
/// + fsync of the folder with the same bytes, in one run.
enum DocumentBenchmarks {
    /// A document whose model is a byte buffer.
    final class BlobDocument: Document, @unchecked Sendable {
        var blob = Data()
        override func load(fromContents contents: Any, ofType typeName: String?) throws { blob = contents as? Data ?? Data() }
        override func contents(forType typeName: String) throws -> Any { blob }
    }

    static func run(rounds: Int) throws {
        try BenchmarkHarness.withScratchDirectory("documents") { root in try run(rounds: rounds, root: root) }
    }

    private static func run(rounds: Int, root: String) throws {
        var harness = BenchmarkHarness(rounds: rounds)
        print("document saves: median of \(rounds) rounds, each one save; in-process coordination; folder \(root)")
        for (label, size) in [("1 KiB", 1024), ("10 MiB", 10 << 20)] {
            let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            // Two buffers to alternate between, so no round pays for copying the model.
            var other = bytes
            other[0] &+= 1
            let documentURL = URL(fileURLWithPath: root + "/document-\(size).bin")
            let rawPath = root + "/raw-\(size).bin"
            try bytes.write(to: documentURL)
            try bytes.write(to: URL(fileURLWithPath: rawPath))
            let document = BlobDocument(fileURL: documentURL)
            let opened = DispatchSemaphore(value: 0)
            document.open { _ in opened.signal() }
            opened.wait()
            var round = 0
            harness.duration(
                "Document save \(label)", baselineName: "raw temp+write+fsync+rename+fsync dir",
                work: {
                    round += 1
                    document.blob = round.isMultiple(of: 2) ? bytes : other
                    document.updateChangeCount(.done)
                    let saved = DispatchSemaphore(value: 0)
                    document.save(to: documentURL, for: .forOverwriting) { _ in saved.signal() }
                    saved.wait()
                },
                baseline: { rawSave(bytes, to: rawPath) })
            let closed = DispatchSemaphore(value: 0)
            document.close { _ in closed.signal() }
            closed.wait()
        }
        harness.report()
    }

    /// The floor: what any crash-safe save must do.
    static func rawSave(_ data: Data, to path: String) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        fsync(fd)
        close(fd)
        rename(temporary, path)
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        fsync(directory)
        close(directory)
    }
}
