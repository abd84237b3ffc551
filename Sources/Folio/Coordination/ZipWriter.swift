import Foundation

/// Writes a directory as a zip archive (stored entries, no compression), streaming each file so a
/// large package does not have to fit in memory. Entries over 4 GiB are refused (no Zip64).
enum ZipWriter {
    static func archive(directory: URL, to destination: URL) throws {
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
        }
        let output = try FileHandle(forWritingTo: destination)
        defer { try? output.close() }
        var central = Data()
        var offset: UInt64 = 0
        var count = 0
        let root = directory.lastPathComponent
        let entries = try (FileManager.default.subpathsOfDirectory(atPath: directory.path)).sorted()
        for relative in [""] + entries {
            let full = relative.isEmpty ? directory : directory.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full.path, isDirectory: &isDirectory) else { continue }
            let name = relative.isEmpty ? root + "/" : root + "/" + relative + (isDirectory.boolValue ? "/" : "")
            let nameBytes = Data(name.utf8)
            guard offset < UInt64(UInt32.max) else { throw tooLarge(destination) }
            let headerOffset = UInt32(offset)
            var header = Data()
            header.appendLE(UInt32(0x0403_4b50))
            header.appendLE(UInt16(20))  // version needed
            header.appendLE(UInt16(0x0808))  // data descriptor follows; UTF-8 names
            header.appendLE(UInt16(0))  // stored
            header.appendLE(UInt16(0))
            header.appendLE(UInt16(0x21))  // 1980-01-01
            header.appendLE(UInt32(0))
            header.appendLE(UInt32(0))
            header.appendLE(UInt32(0))
            header.appendLE(UInt16(nameBytes.count))
            header.appendLE(UInt16(0))
            header.append(nameBytes)
            try output.write(contentsOf: header)
            offset += UInt64(header.count)
            var crc = CRC32()
            var size: UInt64 = 0
            if !isDirectory.boolValue {
                let input = try FileHandle(forReadingFrom: full)
                defer { try? input.close() }
                while let chunk = try input.read(upToCount: 1 << 16), !chunk.isEmpty {
                    crc.update(chunk)
                    size += UInt64(chunk.count)
                    guard size < UInt64(UInt32.max) else { throw tooLarge(full) }
                    try output.write(contentsOf: chunk)
                }
            }
            offset += size
            var descriptor = Data()
            descriptor.appendLE(UInt32(0x0807_4b50))
            descriptor.appendLE(crc.value)
            descriptor.appendLE(UInt32(size))
            descriptor.appendLE(UInt32(size))
            try output.write(contentsOf: descriptor)
            offset += UInt64(descriptor.count)

            central.appendLE(UInt32(0x0201_4b50))
            central.appendLE(UInt16(0x031E))  // made by Unix, 3.0
            central.appendLE(UInt16(20))
            central.appendLE(UInt16(0x0808))
            central.appendLE(UInt16(0))
            central.appendLE(UInt16(0))
            central.appendLE(UInt16(0x21))
            central.appendLE(crc.value)
            central.appendLE(UInt32(size))
            central.appendLE(UInt32(size))
            central.appendLE(UInt16(nameBytes.count))
            central.appendLE(UInt16(0))
            central.appendLE(UInt16(0))
            central.appendLE(UInt16(0))
            central.appendLE(UInt16(0))
            central.appendLE(UInt32(isDirectory.boolValue ? 0o040755 << 16 | 0x10 : 0o100644 << 16))
            central.appendLE(headerOffset)
            central.append(nameBytes)
            count += 1
        }
        guard offset < UInt64(UInt32.max), count < Int(UInt16.max) else { throw tooLarge(destination) }
        try output.write(contentsOf: central)
        var end = Data()
        end.appendLE(UInt32(0x0605_4b50))
        end.appendLE(UInt16(0))
        end.appendLE(UInt16(0))
        end.appendLE(UInt16(count))
        end.appendLE(UInt16(count))
        end.appendLE(UInt32(central.count))
        end.appendLE(UInt32(offset))
        end.appendLE(UInt16(0))
        try output.write(contentsOf: end)
    }

    private static func tooLarge(_ url: URL) -> CocoaError {
        CocoaError(
            .fileWriteUnknown,
            userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: "the snapshot would exceed 4 GiB (no Zip64 support)"])
    }
}

extension Data {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
