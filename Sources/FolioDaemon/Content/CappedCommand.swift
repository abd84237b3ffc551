import FolioSystem
import Foundation

/// Runs a tool and reads at most `limit` bytes of what it writes: past that the tool is stopped
/// (a zip bomb inflates no further than the cap). The worker that runs it has a time and memory
/// limit, which the tool inherits.
enum CappedCommand {
    /// The tool's output (its first `limit` bytes), or nil when it could not start or failed
    /// before writing anything. `enough`, when given, is asked about the output so far each time
    /// it doubles from `firstLook` bytes; when it answers true the tool is stopped there, so a
    /// zip bomb whose text is already full is not inflated on to the cap.
    static func output(_ arguments: [String], limit: Int, firstLook: Int = 2 << 20, enough: (([UInt8]) -> Bool)? = nil) -> [UInt8]? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        // Not inherited by other children the process starts meanwhile (the copy on the tool's
        // output is made by the spawn and stays open).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let child = SpawnedProcess(arguments, output: ends[1])
        close(ends[1])
        defer { close(ends[0]) }
        guard let child else { return nil }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var nextLook = enough == nil ? Int.max : firstLook
        var stopping = false
        while output.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(ends[0], $0.baseAddress!, min($0.count, limit - output.count)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output += chunk[..<count]
            if output.count >= nextLook, let enough {
                if enough(output) { stopping = true; break }
                nextLook = output.count * 2
            }
        }
        // Past the cap, or with enough read, the tool is stopped; it may have ended by itself.
        if stopping || output.count >= limit { child.kill() }
        let status = child.wait()
        guard !output.isEmpty || status == 0 else { return nil }
        return output
    }
}
