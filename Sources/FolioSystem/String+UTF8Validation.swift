#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension String {
    /// `bytes` as a string when they are UTF-8, nil when they are not. The standard library's
    /// `String(validating:as:)` runs unspecialized from here (a generic metadata look-up on every
    /// call: a twentieth of a no-change sync pass, which reads every name of a listing and of the
    /// folder so); decoding with repairs and keeping the result only when nothing was repaired
    /// takes the library's specialized path. A repaired string differs from its bytes wherever it
    /// repaired them, so equal bytes mean valid UTF-8.
    package init?(validUTF8 bytes: UnsafeRawBufferPointer) {
        var text = String(decoding: bytes, as: UTF8.self)
        // Compared as blocks (a string just decoded is stored contiguously), not byte by byte.
        guard text.withUTF8({ $0.count == bytes.count && ($0.isEmpty || memcmp($0.baseAddress!, bytes.baseAddress!, $0.count) == 0) }) else { return nil }
        self = text
    }

    /// `bytes` as a string when they are UTF-8 (``init(validUTF8:)-(UnsafeRawBufferPointer)``).
    package init?(validUTF8 bytes: [UInt8]) {
        guard let text = bytes.withUnsafeBytes({ String(validUTF8: $0) }) else { return nil }
        self = text
    }

    /// `bytes` as a string when they are UTF-8 (``init(validUTF8:)-(UnsafeRawBufferPointer)``).
    package init?(validUTF8 bytes: ArraySlice<UInt8>) {
        guard let text = bytes.withUnsafeBytes({ String(validUTF8: $0) }) else { return nil }
        self = text
    }
}
