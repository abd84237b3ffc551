#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

/// Shows a `Progress` on standard error while work runs: on a terminal, one line redrawn in place
/// (a bar, the percentage, bytes done of the total); elsewhere (a log, a pipe), a line at each
/// tenth, so logs stay short.
struct ProgressReporter: Sendable {
    let progress: Progress
    let label: String

    /// Starts showing; cancel the task when the work ends (the terminal's line is then finished).
    func start() -> Task<Void, Never> {
        let terminal = isatty(STDERR_FILENO) == 1
        let progress = progress, label = label
        return Task {
            var shown = -1
            var drawn = false
            while !Task.isCancelled {
                let total = progress.totalUnitCount, done = progress.completedUnitCount
                let percent = total > 0 ? Int(progress.fractionCompleted * 100) : 0
                if terminal {
                    if total > 0 {
                        FileHandle.standardError.write(Data(("\r" + Self.line(label, percent: percent, done: done, total: total) + "\u{1B}[K").utf8))
                        drawn = true
                    }
                } else if percent / 10 != shown / 10 {
                    printError("\(label): \(percent)%")
                    shown = percent
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
            if terminal, drawn || progress.totalUnitCount > 0 {
                let total = progress.totalUnitCount, done = progress.completedUnitCount
                let percent = total > 0 ? Int(progress.fractionCompleted * 100) : 0
                FileHandle.standardError.write(Data(("\r" + Self.line(label, percent: percent, done: done, total: total) + "\u{1B}[K\n").utf8))
            }
        }
    }

    /// `label [########            ]  42%  12.3 MB of 29.1 MB`.
    static func line(_ label: String, percent: Int, done: Int64, total: Int64) -> String {
        let width = 24
        let filled = max(0, min(width, percent * width / 100))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let percentText = String(repeating: " ", count: max(0, 3 - String(percent).count)) + "\(percent)%"
        let formatter = ByteCountFormatter()
        formatter.countStyle = .file
        return "\(label) [\(bar)] \(percentText)  \(formatter.string(fromByteCount: done)) of \(formatter.string(fromByteCount: total))"
    }
}
