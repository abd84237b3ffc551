public import Foundation

/// Runs executables to completion: system tools (the servers, rclone). FolioTesting adds the
/// project's own binaries (`ProcessRunner.folio`).
public enum ProcessRunner {
    /// The result of a finished process.
    public struct Output: Sendable {
        /// The exit status.
        public var status: Int32
        /// Standard output, as UTF-8.
        public var stdout: String
        /// Standard error, as UTF-8.
        public var stderr: String
    }

    /// Returns the full path of a tool on `PATH`, or nil when it is not installed.
    public static func which(_ tool: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// The first line a running process writes to `handle` (its output pipe), without its newline;
    /// what came before the end when it ends first.
    public static func firstLine(from handle: FileHandle) -> String {
        var printed = Data()
        while !printed.contains(10) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        return String(decoding: printed.prefix { $0 != 10 }, as: UTF8.self)
    }

    /// Runs `executable` with `arguments` to completion and returns its output.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.runWithNoSignalBlocked()
        // Read both pipes before waiting so a chatty child cannot block on a full pipe.
        let errData = LockedData()
        let errReader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        errReader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errData.isSet { usleep(1000) }
        return Output(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.value, as: UTF8.self))
    }
}

final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var done = false
    func set(_ d: Data) { lock.lock(); data = d; done = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return done }
    var value: Data { lock.lock(); defer { lock.unlock() }; return data }
}
