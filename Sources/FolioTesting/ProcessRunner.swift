public import Foundation

/// Runs executables for cross-process tests: the project's own `folio` binary and system tools.
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

    /// The `folio` executable of this build: `$FOLIO_BINARY`, or `.build/debug/folio` (or release)
    /// beside the package.
    public static func folioExecutable(filePath: String = #filePath) -> URL {
        if let path = ProcessInfo.processInfo.environment["FOLIO_BINARY"] { return URL(fileURLWithPath: path) }
        return builtExecutable("folio", filePath: filePath)
    }

    /// An executable of this package's build (`.build/debug/<name>`, or release), found beside the
    /// `folio` binary named by `$FOLIO_BINARY` when that is set.
    public static func builtExecutable(_ name: String, filePath: String = #filePath) -> URL {
        if let path = ProcessInfo.processInfo.environment["FOLIO_BINARY"] {
            return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(name)
        }
        var root = URL(fileURLWithPath: filePath)
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root.deleteLastPathComponent()
        }
        for configuration in ["debug", "release"] {
            let candidate = root.appendingPathComponent(".build/\(configuration)/\(name)")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return root.appendingPathComponent(".build/debug/\(name)")
    }

    /// Returns the full path of a tool on `PATH`, or nil when it is not installed.
    public static func which(_ tool: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
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
        try process.run()
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

    /// Runs the `folio` command.
    public static func folio(_ arguments: [String], environment: [String: String]? = nil) throws -> Output {
        try run(folioExecutable(), arguments, environment: environment)
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
