#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

/// Shows how far work is on standard error while it runs: on a terminal, one line redrawn in place
/// (a bar, the percentage, then what was done of what: bytes, items); elsewhere (a log, a pipe), a
/// line at each tenth, so logs stay short, or nothing for work whose summary says enough.
struct ProgressReporter: Sendable {
    let label: String
    /// How far the work is now: the fraction done (0…1) and what follows the percentage; nil
    /// while there is nothing to show.
    let read: @Sendable () -> (fraction: Double, detail: String)?
    /// Whether a line is written at each tenth when standard error is not a terminal.
    let offTerminal: Bool

    init(label: String, offTerminal: Bool = true, read: @escaping @Sendable () -> (fraction: Double, detail: String)?) {
        self.label = label
        self.offTerminal = offTerminal
        self.read = read
    }

    /// Starts showing; cancel the task when the work ends (the terminal's line is then finished).
    func start() -> Task<Void, Never> {
        let terminal = isatty(STDERR_FILENO) == 1
        let reporter = self
        return Task {
            var shown = -1
            var last: (fraction: Double, detail: String)?
            while !Task.isCancelled {
                if let now = reporter.read() {
                    last = now
                    let percent = Int(now.fraction * 100)
                    if terminal {
                        FileHandle.standardError.write(Data(("\r" + Self.line(reporter.label, percent: percent, detail: now.detail) + "\u{1B}[K").utf8))
                    } else if reporter.offTerminal, percent / 10 != shown / 10 {
                        printError("\(reporter.label): \(percent)%")
                        shown = percent
                    }
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
            // The last state read, once more, ending the line.
            if terminal, let last = reporter.read() ?? last {
                let line = Self.line(reporter.label, percent: Int(last.fraction * 100), detail: last.detail)
                FileHandle.standardError.write(Data(("\r" + line + "\u{1B}[K\n").utf8))
            }
        }
    }

    /// `label [########            ]  42%  detail`.
    static func line(_ label: String, percent: Int, detail: String) -> String {
        let width = 24
        let filled = max(0, min(width, percent * width / 100))
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        let percentText = String(repeating: " ", count: max(0, 3 - String(percent).count)) + "\(percent)%"
        return "\(label) [\(bar)] \(percentText)  \(detail)"
    }

    /// A byte count for people (`12.3 MB`).
    static func bytes(_ count: Int64) -> String {
        let formatter = ByteCountFormatter()
        formatter.countStyle = .file
        return formatter.string(fromByteCount: count)
    }
}
