#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import CFolioShims

/// One request read from `/dev/fuse`: its header and the bytes after it (valid while the buffer it
/// was read into is). The kernel is the only writer of these bytes, but each is read with its
/// bounds checked all the same.
public struct FUSERequest {
    /// The header: operation, unique number, node and the caller's ids.
    public let header: fuse_in_header
    /// The operation's arguments.
    public let body: UnsafeRawBufferPointer

    /// The request in `bytes` (as read), or nil when they are shorter than the header says.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        let size = MemoryLayout<fuse_in_header>.size
        guard bytes.count >= size else { return nil }
        header = bytes.loadUnaligned(as: fuse_in_header.self)
        guard Int(header.len) <= bytes.count, Int(header.len) >= size else { return nil }
        body = UnsafeRawBufferPointer(rebasing: bytes[size..<Int(header.len)])
    }

    /// A request from its parts (a copy kept past its buffer's reuse).
    public init(header: fuse_in_header, body: UnsafeRawBufferPointer) {
        self.header = header
        self.body = body
    }

    /// The operation (`FUSE_LOOKUP` …).
    public var opcode: UInt32 { header.opcode }

    /// The argument structure at `offset`, or nil when the body is too short for it.
    public func argument<T>(_ type: T.Type, at offset: Int = 0) -> T? {
        guard offset >= 0, offset + MemoryLayout<T>.size <= body.count else { return nil }
        return body.loadUnaligned(fromByteOffset: offset, as: T.self)
    }

    /// The NUL-terminated name at `offset` and the offset after its NUL, or nil without a NUL.
    public func name(at offset: Int) -> (name: String, end: Int)? {
        guard offset >= 0, offset < body.count, let end = body[offset...].firstIndex(of: 0) else { return nil }
        return (String(decoding: body[offset..<end], as: UTF8.self), end + 1)
    }

    /// `count` bytes at `offset`, or nil when the body is too short.
    public func bytes(at offset: Int, count: Int) -> UnsafeRawBufferPointer? {
        guard offset >= 0, count >= 0, offset + count <= body.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: body[offset..<(offset + count)])
    }
}

extension FUSEChannel {
    /// Answers request `unique` with an error (a positive `errno` value).
    public func reply(_ unique: UInt64, error: CInt) {
        var header = fuse_out_header(len: UInt32(MemoryLayout<fuse_out_header>.size), error: -error, unique: unique)
        withUnsafeBytes(of: &header) { write($0) }
    }

    /// Answers request `unique` with success and `payload` (none for an empty reply).
    public func reply(_ unique: UInt64, payload: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) {
        let headerSize = MemoryLayout<fuse_out_header>.size
        withUnsafeTemporaryAllocation(byteCount: headerSize + payload.count, alignment: 8) { buffer in
            buffer.storeBytes(of: fuse_out_header(len: UInt32(buffer.count), error: 0, unique: unique), as: fuse_out_header.self)
            if payload.count > 0 { UnsafeMutableRawBufferPointer(rebasing: buffer[headerSize...]).copyMemory(from: payload) }
            write(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Answers request `unique` with success and the bytes of `value` (a protocol structure).
    public func reply<T>(_ unique: UInt64, _ value: T) {
        withUnsafeBytes(of: value) { reply(unique, payload: $0) }
    }

    /// Answers request `unique` with success and the bytes of `first` followed by `second`.
    public func reply<T, U>(_ unique: UInt64, _ first: T, _ second: U) {
        withUnsafeTemporaryAllocation(byteCount: MemoryLayout<T>.size + MemoryLayout<U>.size, alignment: 8) { buffer in
            buffer.storeBytes(of: first, as: T.self)
            buffer.storeBytes(of: second, toByteOffset: MemoryLayout<T>.size, as: U.self)
            reply(unique, payload: UnsafeRawBufferPointer(buffer))
        }
    }
}
