package import FolioSystem
package import Foundation
import Synchronization

/// Work the caller of a fetch has the provider run where it finishes the fetched file: on the
/// provider's thread for file work, in the job that completes the file, instead of on another
/// thread after the call returns. The sync engine's downloads land so (their journal note and
/// their placement), which saves a hop to a thread and back for every file. Folio's own.
///
/// A provider that writes the fetched file itself (``HashingFileProvider``) runs the work once the
/// file is whole (and flushed, when the request asks), as the fetch's last step: nothing after it
/// fails the fetch, so a provider that still has a check to make after the file is written (a
/// version asked for) does not run it, and neither does one reporting the file as it arrives
/// (``FileProviderRequest/arriving``). The work's outcome is kept here; when it is nil after the
/// call, the work did not run and the caller does it itself.
package final class FetchLanding: Sendable {
    /// The work: given the fetched file's path, its status once written and its contents' SHA-256,
    /// it returns whether it took the file (moved it away); a file it leaves stays the caller's.
    package typealias Work = @Sendable (_ path: String, _ written: FileStatus, _ sha256: Data) throws -> Bool

    private let work: Work
    private let ran = Mutex<Result<Bool, any Error>?>(nil)

    package init(_ work: @escaping Work) {
        self.work = work
    }

    /// Runs the work, keeping its outcome (its error too: the fetch itself went well).
    package func land(_ path: String, written: FileStatus, sha256: Data) {
        let outcome = Result { try work(path, written, sha256) }
        ran.withLock { $0 = outcome }
    }

    /// How the work ended, or nil when it did not run.
    package var outcome: Result<Bool, any Error>? {
        ran.withLock { $0 }
    }
}
