import Foundation

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
        // Recording a use (of a file listed, and of one not) leaves a list that reads, with it.
        let date = (list.entries.first?.date ?? Date(timeIntervalSince1970: 0)) + 1
        for path in [list.entries.last?.path, "/fuzz/new & <file>.txt"].compactMap({ $0 }) {
            let use = RecentlyUsedList.Use(path: path, mimeType: "text/plain", application: "Folio", exec: "'folio open %u'", date: date)
            guard let written = try? RecentlyUsedList.recording(use, in: bytes) else { continue }
            precondition((try? RecentlyUsedList(bytes: written))?.entries.contains { $0.path == path } == true, "a recorded use does not read back")
        }
    }
}

/// Entry points for the fuzz targets in `Fuzz/` (not API).
@_spi(Fuzzing)
public enum PlaceholderFuzzing {
    /// Reads `bytes` as a placeholder stub named from its first byte: refused or read, never a trap;
    /// a stub read always stands for the file its own name says, with a sane size.
    public static func exerciseStub(_ bytes: [UInt8]) {
        let stubName = bytes.first.map { $0 % 2 == 0 ? "report.pdf.folio-cloud" : "a.folio-cloud" } ?? "x.folio-cloud"
        guard let stub = PlaceholderStub.parse(Array(bytes.dropFirst()), stubName: stubName) else { return }
        precondition(stub.name + PlaceholderStub.suffix == stubName && stub.size >= 0, "a stub read names another file than the one it is in")
        precondition(PlaceholderStub.parse(Array(stub.encoded()), stubName: stubName) == stub, "a stub does not survive writing")
    }
}
