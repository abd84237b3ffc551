/// Entry points for the fuzz targets in `Fuzz/` (not API): they reach the metadata readers, which
/// are internal to the package.
@_spi(Fuzzing)
public enum MetadataFuzzing {
    /// Reads `bytes` as GTK's `recently-used.xbel`: refused with a reason, or read into entries that
    /// are all absolute paths without NUL, newest first. Traps only on a real defect.
    public static func exerciseRecentlyUsed(_ bytes: [UInt8]) {
        guard let list = try? RecentlyUsedList(bytes: bytes) else { return }
        for (index, entry) in list.entries.enumerated() {
            precondition(entry.path.hasPrefix("/") && !entry.path.utf8.contains(0), "a bad path was read: \(entry.path)")
            if index > 0 { precondition(list.entries[index - 1].date >= entry.date, "entries out of order") }
        }
    }
}
