#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
import FolioSystem
import Foundation

/// The process that reads documents' text (`folio extract-worker`), kept running across files and
/// sandboxed: inside bubblewrap (read-only, no network), with its address space limited, and each
/// file given `timeLimit`. A file that crashes the worker, exhausts its memory or outlasts the
/// limit fails (the index remembers it and does not try it again until it changes); the next file
/// gets a new worker. Blocking: call it from a queue or pool made for blocking work.
///
/// Protocol, one request at a time: the worker reads `<format>\t<path>\n` and answers `ok
/// <byte count>\n<text>` or `error <reason>\n`.
package final class TextExtractionWorker: @unchecked Sendable {
    /// Why a file's text could not be read.
    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// The worker read the file and said why not (unreadable, a tool missing, a tool failed).
        case refused(String)
        /// The file took longer than the limit.
        case timedOut
        /// The worker died on it (a crash, its memory limit).
        case crashed
        /// No worker could be started.
        case unavailable(String)

        package var description: String {
            switch self {
            case .refused(let reason): reason
            case .timedOut: "the text extractor took too long"
            case .crashed: "the text extractor crashed on it"
            case .unavailable(let reason): "no text extractor: \(reason)"
            }
        }
    }

    let command: [String]
    let timeLimit: Duration
    private var process: Process?
    private var input: FileHandle?
    private var output: Int32 = -1
    private var buffer: [UInt8] = []
    private let lock = NSLock()

    /// - Parameters:
    ///   - executable: the `folio` executable (the worker is its `extract-worker` command).
    ///   - memoryLimit: the worker's address space, in bytes.
    package init(executable: String, timeLimit: Duration = .seconds(10), memoryLimit: Int = 2 << 30) {
        var command = [executable, "extract-worker"]
        if let prlimit = ExecutableSearch.locate("prlimit") { command = [prlimit, "--as=\(memoryLimit)", "--core=0", "--"] + command }
        self.command = Bubblewrap.wrap(command, privateTemporary: false)
        self.timeLimit = timeLimit
    }

    deinit { stop() }

    /// The text of the file at `path`, read as `format`.
    package func text(ofFileAt path: String, format: TextExtractor.Format) throws(Failure) -> String {
        let results = texts(of: [(path, format)])
        guard let result = results.first else { throw .crashed }
        return try result.get()
    }

    /// The texts of `files`, in order: the requests are all sent at once, so the worker reads one
    /// file while the text of the one before travels back. Each file has `timeLimit` from the end
    /// of the one before. The results stop at a file that timed out or crashed the worker (that
    /// file's failure is the last result): the files after it were not read.
    package func texts(of files: [(path: String, format: TextExtractor.Format)]) -> [Result<String, Failure>] {
        lock.lock()
        defer { lock.unlock() }
        // A path that would break the protocol's lines is refused without being sent.
        let sendable = files.map { !$0.path.contains("\n") && !$0.path.contains("\t") }
        var requests: [UInt8] = []
        for (file, sent) in zip(files, sendable) where sent { requests += Array("\(file.format.rawValue)\t\(file.path)\n".utf8) }
        do {
            try start()
            try write(requests)
        } catch {
            return [.failure(error)]
        }
        var results: [Result<String, Failure>] = []
        for sent in sendable {
            guard sent else {
                results.append(.failure(.refused("a path with a line break or a tab")))
                continue
            }
            do {
                results.append(.success(try readReply(until: .now + timeLimit)))
            } catch {
                results.append(.failure(error))
                // The worker is gone: what followed was not read.
                if error == .timedOut || error == .crashed { return results }
            }
        }
        return results
    }

    private func write(_ requests: [UInt8]) throws(Failure) {
        do {
            try input?.write(contentsOf: Data(requests))
        } catch {
            stop()
            throw .crashed
        }
    }

    /// One reply: the text, or the worker's reason for refusing the file.
    private func readReply(until deadline: ContinuousClock.Instant) throws(Failure) -> String {
        let header = try readLine(until: deadline)
        if header.hasPrefix("error ") { throw .refused(String(header.dropFirst(6))) }
        guard header.hasPrefix("ok "), let count = Int(header.dropFirst(3)), count >= 0, count <= TextExtractor.textLimit else {
            stop()
            throw .crashed
        }
        return String(decoding: try read(count, until: deadline), as: UTF8.self)
    }

    /// Stops the worker (the next request starts another).
    package func stop() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? input?.close()
        if output >= 0 { close(output) }
        process = nil
        input = nil
        output = -1
        buffer = []
    }

    private func start() throws(Failure) {
        if let process, process.isRunning { return }
        stop()
        // A worker that died leaves a pipe with no reader: the write fails with EPIPE instead of
        // ending the daemon with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let requests = Pipe(), replies = Pipe()
        process.standardInput = requests
        process.standardOutput = replies
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .unavailable("\(command[0]): \(error)")
        }
        self.process = process
        input = requests.fileHandleForWriting
        output = dup(replies.fileHandleForReading.fileDescriptor)
        try? replies.fileHandleForReading.close()
        // The worker says when it is ready: a file's time limit starts there, not while a loaded
        // machine loads the executable and sets up the sandbox (which, seconds long under load,
        // failed the first file after each start).
        let line: String
        do {
            line = try readLine(until: .now + Self.startupLimit)
        } catch {
            throw .unavailable("\(command[0]) did not start within \(Self.startupLimit) (\(error))")
        }
        guard line == "ready" else {
            stop()
            throw .unavailable("\(command[0]) did not start: it said \(line.prefix(200).debugDescription)")
        }
    }

    /// How long a new worker may take to say it is ready.
    static let startupLimit = Duration.seconds(30)

    private func fill(until deadline: ContinuousClock.Instant) throws(Failure) {
        let remaining = deadline - .now
        guard remaining > .zero else {
            stop()
            throw .timedOut
        }
        var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(min(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
        let ready = poll(&descriptor, 1, milliseconds)
        if ready == 0 || (ready < 0 && errno == EINTR) { return }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let count = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress!, $0.count) }
        guard count > 0 else {
            stop()
            throw .crashed
        }
        buffer += chunk[..<count]
    }

    private func readLine(until deadline: ContinuousClock.Instant) throws(Failure) -> String {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            guard buffer.count < 4096 else {
                stop()
                throw .crashed
            }
            try fill(until: deadline)
        }
    }

    private func read(_ count: Int, until deadline: ContinuousClock.Instant) throws(Failure) -> [UInt8] {
        while buffer.count < count { try fill(until: deadline) }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }
}
