import Foundation
import FolioSystem
import SystemPackage
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Whose process opened a loopback TCP connection: the kernel's socket table
/// (`/proc/net/tcp`, and `tcp6` for IPv4-mapped addresses) gives each socket's owner. Anyone on
/// the machine can connect to a port on 127.0.0.1; only the user's own processes may use the page,
/// whatever they know (a token seen in another process's command line, a cookie a browser sent to
/// another user's server on 127.0.0.1). Answers are kept per client port for a while, so a
/// keep-alive connection's requests read the table once.
final class LoopbackPeer: Sendable {
    private let known = Mutex<[Int: (uid: UInt32?, checked: ContinuousClock.Instant)]>([:])

    /// The uid owning the socket at 127.0.0.1:`remote` connected to 127.0.0.1:`local`, or nil
    /// when the table has no such connection. Blocking (reads /proc): on a blocking pool.
    func owner(remote: Int, local: Int) -> UInt32? {
        let now = ContinuousClock.now
        if let cached = known.withLock({ $0[remote] }), now - cached.checked < .seconds(30) { return cached.uid }
        var uid: UInt32?
        // procfs reports a size of 0, so the table is read to its end; it may shift between reads,
        // so it is read again (twice at most) when the connection is not found.
        for _ in 0..<3 where uid == nil {
            for table in ["/proc/net/tcp", "/proc/net/tcp6"] where uid == nil {
                guard let bytes = try? FilePath(table).readBytes(maximumSize: 256 << 20) else { continue }
                uid = Self.owner(in: String(decoding: bytes, as: UTF8.self), remote: remote, local: local)
            }
        }
        known.withLock { known in
            if known.count > 4096 { known.removeAll() }
            known[remote] = (uid, now)
        }
        return uid
    }

    /// The uid of the line whose local address is the client's port and whose remote address is
    /// ours (the client's socket: the kernel lists both ends of a loopback connection).
    static func owner(in table: String, remote: Int, local: Int) -> UInt32? {
        func hex(_ port: Int) -> String {
            let digits = String(port, radix: 16, uppercase: true)
            return ":" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        let client = hex(remote), server = hex(local)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
            guard fields.count > 7, fields[1].hasSuffix(client), fields[2].hasSuffix(server), Self.isLoopback(fields[1]) else { continue }
            return UInt32(fields[7])
        }
        return nil
    }

    /// 127.0.0.1 as the table writes it (little-endian hex), plain or IPv4-mapped in IPv6.
    private static func isLoopback(_ address: Substring) -> Bool {
        address.hasPrefix("0100007F:") || address.hasPrefix("0000000000000000FFFF00000100007F:")
    }
}
