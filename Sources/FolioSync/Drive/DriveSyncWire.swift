package import Folio

/// `drive.sync` on the daemon's socket (docs/protocol.md, "Drive"): a pass's report as the reply's
/// result, and a failed pass as an error a client can tell apart (`failed`, with a `domain`).
package enum DriveSyncWire {
    /// The error domain of a pass that stopped before changing anything (``SyncStop``).
    package static let stopDomain = "FolioSyncStop"

    /// The result for `report`.
    package static func value(of report: SyncReport) -> WireValue {
        var deferred: [String: WireValue] = [:], setAside: [String: WireValue] = [:]
        for (path, reason) in report.deferred { deferred[path] = .string(reason) }
        for (path, reason) in report.setAside { setAside[path] = .string(reason) }
        return [
            "uploaded": .int(Int64(report.uploaded)), "downloaded": .int(Int64(report.downloaded)),
            "placeholders": .int(Int64(report.placeholders)), "moved": .int(Int64(report.moved)),
            "deletedOnServer": .int(Int64(report.deletedOnServer)), "deletedHere": .int(Int64(report.deletedHere)),
            "converged": .int(Int64(report.converged)), "conflicts": .array(report.conflicts.map { .string($0) }),
            "sharedConflicts": .int(Int64(report.sharedConflicts)), "resolvedConflicts": .int(Int64(report.resolvedConflicts)),
            "heldDeletions": .int(Int64(report.heldDeletions)), "merged": .bool(report.merged), "deferred": .object(deferred),
            "setAside": .object(setAside), "skipped": .array(report.skipped.map { .string($0) }),
        ]
    }

    /// The report a result stands for.
    ///
    /// - Throws: `CoordinationFailure` (`bad-request`) when the result is not a report.
    package static func report(from value: WireValue) throws(CoordinationFailure) -> SyncReport {
        func count(_ key: String) throws(CoordinationFailure) -> Int {
            guard let number = value[key]?.intValue, number >= 0, let count = Int(exactly: number) else { throw malformed(key) }
            return count
        }
        func strings(_ key: String) throws(CoordinationFailure) -> [String] {
            guard let array = value[key]?.arrayValue else { throw malformed(key) }
            var result: [String] = []
            for element in array {
                guard let text = element.stringValue else { throw malformed(key) }
                result.append(text)
            }
            return result
        }
        var report = SyncReport()
        report.uploaded = try count("uploaded")
        report.downloaded = try count("downloaded")
        report.placeholders = try count("placeholders")
        report.moved = try count("moved")
        report.deletedOnServer = try count("deletedOnServer")
        report.deletedHere = try count("deletedHere")
        report.converged = try count("converged")
        report.conflicts = try strings("conflicts")
        report.sharedConflicts = try count("sharedConflicts")
        report.resolvedConflicts = try count("resolvedConflicts")
        report.heldDeletions = try count("heldDeletions")
        guard let merged = value["merged"]?.boolValue else { throw malformed("merged") }
        report.merged = merged
        func reasons(_ key: String) throws(CoordinationFailure) -> [String: String] {
            guard case .object(let members)? = value[key] else { throw malformed(key) }
            var result: [String: String] = [:]
            for (path, reason) in members {
                guard let reason = reason.stringValue else { throw malformed(key) }
                result[path] = reason
            }
            return result
        }
        report.deferred = try reasons("deferred")
        // Absent from a daemon that predates it.
        if value["setAside"] != nil { report.setAside = try reasons("setAside") }
        report.skipped = try strings("skipped")
        return report
    }

    /// The error for a pass that failed with `error`: a stop (``stopDomain``), a provider's error
    /// (its domain and code), or anything else, each with its message for people.
    package static func failure(of error: any Error) -> CoordinationFailure {
        switch error {
        case let stop as SyncStop:
            CoordinationFailure(kind: .failed, message: stop.description, domain: stopDomain)
        case let error as FileProviderError:
            CoordinationFailure(kind: .failed, message: error.description, domain: FileProviderError.errorDomain, code: error.errorCode)
        case let failure as CoordinationFailure:
            failure
        default:
            CoordinationFailure(kind: .failed, message: "the drive's pass failed: \(error)")
        }
    }

    private static func malformed(_ key: String) -> CoordinationFailure {
        CoordinationFailure(kind: .invalid, message: "the daemon's drive.sync result has no valid \"\(key)\"")
    }
}

extension DriveProgressReply {
    /// The reply for the board `snapshot` (nothing under way without one).
    package init(_ snapshot: SyncProgressBoard.Snapshot?) {
        self.init(
            pass: snapshot?.pass.map(Pass.init), last: snapshot?.last.map(Pass.init),
            transfers: (snapshot?.transfers ?? [:]).sorted { $0.key < $1.key }.map {
                Transfer(path: $0.key, direction: $0.value.direction.rawValue, percent: $0.value.percent)
            })
    }
}

extension DriveProgressReply.Pass {
    /// The pass of a board's snapshot.
    package init(_ pass: SyncProgressBoard.Snapshot.Pass) {
        self.init(actions: pass.actions, done: pass.done, bytes: pass.bytes, bytesDone: pass.bytesDone)
    }
}
