import Folio
import Foundation

/// A program waiting for a file (its open through the drive's mount, a coordinated read) is not
/// kept waiting for a whole pass: once the pass running in this process has planned, a download
/// of placeholders the pass leaves alone runs beside it, and the pass's end waits for it. A
/// download of something the pass changes waits for the pass, as any waits for the drive's lock.
extension SyncEngine {
    /// Where the pass running now is.
    enum PassStage: Sendable {
        /// No pass runs.
        case idle
        /// A pass runs and has not planned yet: what it will change is not known.
        case planning
        /// A pass runs what it planned, changing these paths (and what lies within them).
        case running(touching: [SyncPath])
    }

    /// Downloads the placeholders at or below `paths` beside the pass running now, as
    /// ``materialize(_:progress:arriving:)`` does; nil, having done nothing, when no pass runs,
    /// when it has not planned yet, or when the pass or another download beside it changes one
    /// of the paths, something within one, or a folder holding one.
    func materializeBesidePass(_ paths: [SyncPath], progress: Progress, arriving: ArrivingContents? = nil) async throws -> [SyncPath]? {
        guard admitsBesidePass(paths) else { return nil }
        besidePass.append(paths)
        defer {
            besidePass.remove(at: besidePass.firstIndex(of: paths)!)
            if besidePass.isEmpty {
                for waiter in besidePassEnded { waiter.resume() }
                besidePassEnded = []
            }
        }
        return try await materialize(paths, progress: progress, arriving: arriving, besidePass: true)
    }

    /// Whether a pass runs that leaves `paths` alone, and what lies within and above them, as
    /// the downloads beside it do (two downloads of one file take turns: the second finds it
    /// downloaded).
    func admitsBesidePass(_ paths: [SyncPath]) -> Bool {
        guard case .running(let touching) = passStage else { return false }
        let overlaps = { (changed: SyncPath) in paths.contains { changed.isWithin($0) || $0.isWithin(changed) } }
        return !touching.contains(where: overlaps) && !besidePass.joined().contains(where: overlaps)
    }

    /// The pass ended: downloads wait for the drive's lock again, and those running beside it end
    /// first (the caller then sweeps the staging folder they write in).
    func endPassStage() async {
        passStage = .idle
        while !besidePass.isEmpty {
            await withCheckedContinuation { besidePassEnded.append($0) }
        }
    }
}
