#if canImport(Glibc)
@preconcurrency public import Glibc
#elseif canImport(Musl)
@preconcurrency public import Musl
#endif

/// The name in a `readdir` record, read within the record. A record is only `d_reclen` bytes long
/// (the kernel packs them), so copying its 256-byte `d_name` field whole — as
/// `withUnsafeBytes(of: record.pointee.d_name)` does — reads past the end of the last record in
/// libc's buffer, and crashes at a page boundary.
public enum DirectoryRecord {
    /// Calls `body` with the name's bytes (without its NUL) and the NUL-terminated name, both
    /// pointing into the record.
    public static func withName<T>(
        _ record: UnsafeMutablePointer<dirent>, _ body: (UnsafeRawBufferPointer, UnsafePointer<CChar>) throws -> T
    ) rethrows -> T {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        let start = UnsafeRawPointer(record) + offset
        let limit = max(0, Int(record.pointee.d_reclen) - offset)
        let name = start.assumingMemoryBound(to: CChar.self)
        return try body(UnsafeRawBufferPointer(start: start, count: strnlen(name, limit)), name)
    }

    /// The name, decoded as UTF-8 (invalid bytes replaced).
    public static func name(_ record: UnsafeMutablePointer<dirent>) -> String {
        withName(record) { bytes, _ in String(decoding: bytes, as: UTF8.self) }
    }

    /// The names in `folder` (`.` and `..` left out); empty when it cannot be read.
    public static func names(in folder: String) -> [String] {
        guard let stream = opendir(folder) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let record = readdir(stream) {
            let name = name(record)
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
