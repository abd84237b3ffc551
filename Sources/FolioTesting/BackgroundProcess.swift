public import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A helper process that runs on beside a test (a presenter, an open document): lines sent to its
/// input, its output collected as it comes by a thread of its own.
public final class BackgroundProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let lock = NSLock()
    private var text = ""

    /// Starts `executable` with `arguments` and `environment`; its errors are discarded.
    public init(_ executable: URL, _ arguments: [String] = [], environment: [String: String]) throws {
        let output = Pipe()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.runWithNoSignalBlocked()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.withLock { text += String(decoding: chunk, as: UTF8.self) }
            }
        }
    }

    /// What it wrote so far.
    public var output: String { lock.withLock { text } }

    /// Writes `line` and a line break to its input.
    public func send(_ line: String) { try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8)) }

    /// Waits until its output holds `fragment`, at most `seconds`.
    public func wait(for fragment: String, seconds: Double = 15) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !output.contains(fragment) {
            guard Date() < deadline else { throw TestFailure("the helper never said \(fragment): \(output)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Ends it: its input closed, then SIGKILL if it still runs, and waited for.
    public func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
