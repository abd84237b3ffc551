#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

/// The points of a pass where a crash test stops the process dead (SIGKILL), named in the
/// environment's `FOLIO_SYNC_CRASH_AT`: how the tests reach the worst crash points exactly (the
/// crash loop reaches the others at random). Unset, as in every real use, nothing happens.
enum SyncCrashPoint: String, Sendable {
    /// The server took an upload, and no base records it yet.
    case uploaded
    /// A download took the file's place, and no base records it yet.
    case placed

    private static let chosen = ProcessInfo.processInfo.environment["FOLIO_SYNC_CRASH_AT"].flatMap(Self.init(rawValue:))

    /// Stops the process here when this point was chosen.
    static func reached(_ point: Self) {
        if chosen == point { raise(SIGKILL) }
    }
}
