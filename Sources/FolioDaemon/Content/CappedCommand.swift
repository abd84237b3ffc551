import FolioSystem
import Foundation

/// Runs a tool and reads at most `limit` bytes of what it writes: past that the tool is stopped
/// (a zip bomb inflates no further than the cap). The worker that runs it has a time and memory
/// limit, which the tool inherits.
enum CappedCommand {
    /// The tool's output (its first `limit` bytes), or nil when it could not start or failed
    /// before writing anything.
    static func output(_ arguments: [String], limit: Int) -> [UInt8]? {
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
        while output.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(ends[0], $0.baseAddress!, min($0.count, limit - output.count)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output += chunk[..<count]
        }
        // Past the cap the tool is stopped; it may have ended by itself.
        if output.count >= limit { child.kill() }
        let status = child.wait()
        guard !output.isEmpty || status == 0 else { return nil }
        return output
    }
}
