public import SystemPackage

/// What an ELF executable or shared object tells the dynamic loader about the libraries it loads:
/// its `DT_NEEDED` names and its search path (`DT_RUNPATH`, or the older `DT_RPATH`), read from
/// the dynamic segment — the loader's own view, without running anything (`ldd` runs the program).
///
/// The bytes are untrusted (any file an app ships): every offset and size is checked against the
/// file, and a malformed file reads as nil, never a trap.
public struct ELFDynamicSection: Sendable, Equatable {
    /// The libraries the object needs, in order (`DT_NEEDED`).
    public var needed: [String]
    /// The folders it asks the loader to search, unexpanded (`$ORIGIN` as written).
    public var searchPath: [String]

    /// Reads the dynamic section through `read(offset, count)`, which returns the file's bytes
    /// there (fewer at its end). Nil when it is not an ELF file or is malformed; empty lists for an
    /// object linked statically.
    public init?(read: (UInt64, Int) -> [UInt8]) {
        let identification = read(0, 64)
        guard identification.count >= 52, identification[0] == 0x7f, identification[1] == 0x45, identification[2] == 0x4c,
            identification[3] == 0x46
        else { return nil }
        let wide: Bool
        switch identification[4] {
        case 1: wide = false
        case 2: wide = true
        default: return nil
        }
        let little: Bool
        switch identification[5] {
        case 1: little = true
        case 2: little = false
        default: return nil
        }
        let reader = Reader(wide: wide, little: little)
        guard wide ? identification.count >= 64 : true else { return nil }
        let header = identification
        let programOffset = wide ? reader.word(header, 32) : reader.word(header, 28)
        let entrySize = Int(reader.half(header, wide ? 54 : 42))
        let entryCount = Int(reader.half(header, wide ? 56 : 44))
        guard entryCount > 0 else {
            needed = []
            searchPath = []
            return
        }
        guard entryCount <= 4096, entrySize >= (wide ? 56 : 32), entrySize <= 256 else { return nil }
        let table = read(programOffset, entrySize * entryCount)
        guard table.count == entrySize * entryCount else { return nil }

        struct Segment { var type: UInt32; var offset: UInt64; var address: UInt64; var fileSize: UInt64 }
        var segments: [Segment] = []
        for index in 0..<entryCount {
            let base = index * entrySize
            let type = reader.u32(table, base)
            if wide {
                segments.append(Segment(type: type, offset: reader.u64(table, base + 8), address: reader.u64(table, base + 16), fileSize: reader.u64(table, base + 32)))
            } else {
                segments.append(
                    Segment(
                        type: type, offset: UInt64(reader.u32(table, base + 4)), address: UInt64(reader.u32(table, base + 8)),
                        fileSize: UInt64(reader.u32(table, base + 16))))
            }
        }
        guard let dynamic = segments.first(where: { $0.type == 2 }) else {
            needed = []
            searchPath = []
            return
        }
        let entryBytes = wide ? 16 : 8
        guard dynamic.fileSize <= 1 << 20 else { return nil }
        let entries = read(dynamic.offset, Int(dynamic.fileSize))
        guard entries.count == Int(dynamic.fileSize) else { return nil }
        var neededOffsets: [UInt64] = []
        var runPath: UInt64?
        var rPath: UInt64?
        var stringTable: UInt64?
        var stringSize: UInt64?
        var position = 0
        while position + entryBytes <= entries.count {
            let tag = wide ? reader.u64(entries, position) : UInt64(reader.u32(entries, position))
            let value = wide ? reader.u64(entries, position + 8) : UInt64(reader.u32(entries, position + 4))
            position += entryBytes
            switch tag {
            case 0: position = entries.count
            case 1: if neededOffsets.count < 1024 { neededOffsets.append(value) }
            case 5: stringTable = value
            case 10: stringSize = value
            case 15: rPath = value
            case 29: runPath = value
            default: break
            }
        }
        guard !neededOffsets.isEmpty || runPath != nil || rPath != nil else {
            needed = []
            searchPath = []
            return
        }
        // The string table is named by its address: find the loaded segment that holds it.
        guard let address = stringTable, let size = stringSize, size <= 16 << 20,
            let load = segments.first(where: { $0.type == 1 && $0.address <= address && address - $0.address < $0.fileSize }),
            case let (fileOffset, overflow) = load.offset.addingReportingOverflow(address - load.address), !overflow
        else { return nil }
        let strings = read(fileOffset, Int(size))
        guard strings.count == Int(size) else { return nil }
        func string(at offset: UInt64) -> String? {
            guard offset < UInt64(strings.count) else { return nil }
            let start = Int(offset)
            guard let end = strings[start...].firstIndex(of: 0) else { return nil }
            return String(decoding: strings[start..<end], as: UTF8.self)
        }
        var needed: [String] = []
        for offset in neededOffsets {
            guard let name = string(at: offset), !name.isEmpty else { return nil }
            needed.append(name)
        }
        self.needed = needed
        if let path = runPath ?? rPath {
            guard let text = string(at: path) else { return nil }
            searchPath = text.split(separator: ":").map(String.init)
        } else {
            searchPath = []
        }
    }

    /// Reads the dynamic section of the file open as `descriptor` (nil for anything else).
    public init?(of descriptor: FileDescriptor) {
        self.init { offset, count in
            guard count > 0, offset <= UInt64(Int64.max) else { return [] }
            var bytes = [UInt8](repeating: 0, count: count)
            let read = (try? bytes.withUnsafeMutableBytes { try descriptor.read(fromAbsoluteOffset: Int64(offset), into: $0) }) ?? 0
            return Array(bytes[0..<read])
        }
    }

    /// Reads the dynamic section of `bytes`, a whole file.
    public init?(bytes: [UInt8]) {
        self.init { offset, count in
            guard offset < UInt64(bytes.count), count > 0 else { return [] }
            let start = Int(offset)
            return Array(bytes[start..<min(bytes.count, start + min(count, bytes.count - start))])
        }
    }

    private struct Reader {
        let wide: Bool
        let little: Bool

        func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
            guard at + 2 <= bytes.count else { return 0 }
            let value = UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
            return little ? value : value.byteSwapped
        }

        func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
            guard at + 4 <= bytes.count else { return 0 }
            var value: UInt32 = 0
            for index in 0..<4 { value |= UInt32(bytes[at + index]) << (8 * index) }
            return little ? value : value.byteSwapped
        }

        func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
            guard at + 8 <= bytes.count else { return 0 }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[at + index]) << (8 * index) }
            return little ? value : value.byteSwapped
        }

        func half(_ bytes: [UInt8], _ at: Int) -> UInt16 { u16(bytes, at) }

        func word(_ bytes: [UInt8], _ at: Int) -> UInt64 { wide ? u64(bytes, at) : UInt64(u32(bytes, at)) }
    }
}
