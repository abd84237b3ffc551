import Foundation

/// Entry points for the fuzz targets in `Fuzz/` (not API): they reach the drive's formats, which
/// are internal to the package.
@_spi(Fuzzing)
public enum SyncFuzzing {
    /// Reads `bytes` as a shared conflict manifest named for what it says: refused or read, never a
    /// trap; one read has a SHA-256 object and a path that stays inside the drive.
    public static func exerciseConflictManifest(_ bytes: [UInt8]) {
        let data = Data(bytes)
        guard let decoded = try? JSONDecoder().decode(SharedConflict.self, from: data) else {
            _ = SharedConflict.parse(data, name: String(repeating: "0", count: 64) + "-" + String(repeating: "0", count: 16) + ".json")
            return
        }
        guard let manifest = SharedConflict.parse(data, name: decoded.manifestName) else { return }
        precondition(
            SharedConflict.isSHA256(manifest.object) && !manifest.path.hasPrefix("/") && !manifest.path.split(separator: "/").contains(".."),
            "a manifest leaving the drive was read")
    }

    /// Reads `bytes` as the log of unfinished-transfer notes (which a crash can cut anywhere): never a
    /// trap, and every note read is written back as the same record.
    public static func exerciseUnfinishedNoteLog(_ bytes: [UInt8]) {
        let notes = UnfinishedNoteLog.parse(bytes)
        let written = notes.flatMap { UnfinishedNoteLog.record($0.0, $0.1) }
        precondition(UnfinishedNoteLog.parse(written).elementsEqual(notes) { $0.0 == $1.0 && $0.1 == $1.1 }, "a note read from the log reads otherwise once written again")
    }
}
