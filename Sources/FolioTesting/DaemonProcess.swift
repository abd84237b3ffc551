import FolioServers
public import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A `folio daemon` started as a real process with a private XDG tree, for tests.
public final class DaemonProcess: @unchecked Sendable {
    /// The daemon's process.
    public let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    /// The environment it runs with.
    public let environment: [String: String]
    private let stderrLock = NSLock()
    private var stderrText = ""
    /// Signalled when the process ends.
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `folio daemon` with `environment` and extra `arguments`; as the user `uid` (through
    /// `setpriv`, for tests that need a user other than root) when given.
    public init(environment: [String: String], arguments: [String] = [], runAs uid: UInt32? = nil) throws {
        self.environment = environment
        let daemonArguments = ["daemon", "--log-level", "warning"] + arguments
        if let uid {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", ProcessRunner.folioExecutable().path] + daemonArguments
        } else {
            process.executableURL = ProcessRunner.folioExecutable()
            process.arguments = daemonArguments
        }
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        process.terminationHandler = { [exited] _ in exited.signal() }
        try process.run()
        let handle = errors.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                stderrLock.withLock { stderrText += String(decoding: chunk, as: UTF8.self) }
            }
        }
    }

    /// What the daemon wrote to stderr so far (its log).
    public var log: String { stderrLock.withLock { stderrText } }

    /// Whether the log comes to hold `text` within `seconds` (stderr is read by a thread of its
    /// own, so a line can arrive a moment after what it reports).
    public func logs(_ text: String, within seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !log.contains(text) {
            guard Date() < deadline else { return false }
            usleep(20_000)
        }
        return true
    }

    /// How much the daemon has logged so far (bytes of its stderr): a mark for `log(after:)`, to
    /// wait for a line written after some point of a test rather than take an earlier one for it.
    public var logLength: Int { stderrLock.withLock { stderrText.utf8.count } }

    /// What the daemon logged after `mark` (a `logLength` taken earlier).
    public func log(after mark: Int) -> String {
        String(decoding: log.utf8.dropFirst(mark), as: UTF8.self)
    }

    /// Reads stdout until the daemon says where it listens, and returns the socket path.
    public func waitForListening(timeout: TimeInterval = 20) throws -> String {
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        let handle = output.fileHandleForReading
        // A daemon that never speaks is killed at the deadline, which ends the blocking read.
        let pid = process.processIdentifier
        let listening = Flag()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [process] in
            if process.isRunning && !listening.isSet { kill(pid, SIGKILL) }
        }
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("folio daemon listening on unix:") }) {
                listening.set()
                return String(line.dropFirst("folio daemon listening on unix:".count))
            }
        }
        throw TestFailure("daemon did not report its socket; output: \(text) \(log)")
    }

    /// Stops the daemon with SIGTERM and returns its exit status.
    @discardableResult
    public func stop() -> Int32 {
        // A daemon wedged in its shutdown (a thread blocked for good) is killed after 15 s, so a
        // test that found such a defect fails instead of hanging the run.
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            if exited.wait(timeout: .now() + 15) == .timedOut {
                FileHandle.standardError.write(Data("DaemonProcess: the daemon (pid \(process.processIdentifier)) did not stop within 15 s of SIGTERM; killing it\n".utf8))
                kill(process.processIdentifier, SIGKILL)
            }
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// A failure of a test fixture, with a message.
public struct TestFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    /// Creates a failure.
    public init(_ description: String) { self.description = description }
}

/// A flag set once, read from any thread.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
