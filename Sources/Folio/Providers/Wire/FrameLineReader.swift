#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Reads newline-terminated lines from a file descriptor with blocking reads, refusing a line longer
/// than a limit: for the provider protocol's pipes, which have one reader thread each.
package struct FrameLineReader {
    /// Why reading stopped.
    package enum Failure: Error {
        case lineTooLong(Int)
        case readFailed(Int32)
    }

    private let descriptor: Int32
    private let limit: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next newline resumes: each byte is looked at once.
    private var scanned = 0
    private var chunk = [UInt8](repeating: 0, count: 64 << 10)

    /// A reader of `descriptor` whose lines are at most `limit` bytes.
    package init(descriptor: Int32, limit: Int) {
        self.descriptor = descriptor
        self.limit = limit
    }

    /// The next line without its newline, or nil at the end of input (a last line without a newline
    /// is returned too).
    package mutating func next() throws(Failure) -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[max(start, scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                scanned = start
                return line
            }
            scanned = buffer.count
            if buffer.count - start > limit { throw .lineTooLong(limit) }
            if start > 0 {
                buffer.removeSubrange(0..<start)
                scanned -= start
                start = 0
            }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .readFailed(errno)
            }
            if count == 0 {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                return line
            }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }
}
