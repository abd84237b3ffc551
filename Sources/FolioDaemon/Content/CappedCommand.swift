import Foundation

/// Runs a tool and reads at most `limit` bytes of what it writes: past that the tool is stopped
/// (a zip bomb inflates no further than the cap). The worker that runs it has a time and memory
/// limit, which the tool inherits.
enum CappedCommand {
    /// The tool's output (its first `limit` bytes), or nil when it could not start or failed
    /// before writing anything.
    static func output(_ arguments: [String], limit: Int) -> [UInt8]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let reader = pipe.fileHandleForReading
        var output: [UInt8] = []
        while output.count < limit {
            guard let chunk = try? reader.read(upToCount: min(1 << 16, limit - output.count)), !chunk.isEmpty else { break }
            output.append(contentsOf: chunk)
        }
        if process.isRunning { process.terminate() }
        try? reader.close()
        process.waitUntilExit()
        guard !output.isEmpty || process.terminationStatus == 0 else { return nil }
        return output
    }
}
