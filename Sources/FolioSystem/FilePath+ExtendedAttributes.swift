#if os(Linux)
@preconcurrency import Glibc
import CFolioShims
public import SystemPackage
import Synchronization

extension FileDescriptor {
    /// Whether this kernel has `listxattrat` (Linux 6.13); learnt at the first call.
    private static let hasListAttributesAt = Atomic<Bool>(true)

    /// Returns the names of the extended attributes of the entry `name` of this folder, not
    /// following a final symbolic link (`listxattrat`: one path component looked up, where
    /// `llistxattr` walks the whole path, a tenth of the index's reads of a tree); nil where the
    /// kernel lacks the call, and the caller reads them by path.
    public func extendedAttributeNames(ofEntry name: UnsafePointer<CChar>) throws(Errno) -> [String]? {
        guard Self.hasListAttributesAt.load(ordering: .relaxed) else { return nil }
        var capacity = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: capacity)
            let result = buffer.withUnsafeMutableBytes { raw in
                cfolio_listxattrat(rawValue, name, raw.baseAddress?.assumingMemoryBound(to: CChar.self), UInt(raw.count))
            }
            if result == 0 { return [] }
            if result > 0 { return buffer[0..<result].split(separator: 0).map { String(decoding: $0, as: UTF8.self) } }
            let code = Errno(rawValue: errno)
            switch code {
            case .noFunction:
                Self.hasListAttributesAt.store(false, ordering: .relaxed)
                return nil
            case .outOfRange:
                // More names than the buffer holds: ask for their size and try again.
                let size = cfolio_listxattrat(rawValue, name, nil, 0)
                guard size >= 0 else { throw Errno(rawValue: errno) }
                capacity = max(size, capacity * 2)
            case .interrupted: continue
            default: throw code
            }
        }
    }
}

extension FilePath {
    /// Returns the value of the extended attribute `name` of the file at this path, or nil if it has none.
    ///
    /// - Parameters:
    ///   - name: The attribute's full name, such as `user.xdg.tags`.
    ///   - followSymlinks: Whether to read the attribute of a symbolic link's target (`getxattr`) or of the
    ///     link itself (`lgetxattr`).
    /// - Throws: `Errno` for any failure other than a missing attribute.
    ///
    /// The corresponding C functions are `getxattr` and `lgetxattr`.
    public func extendedAttribute(named name: String, followSymlinks: Bool = true) throws(Errno) -> [UInt8]? {
        var capacity = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: capacity)
            let result: Int = physical.withPlatformString { path in
                buffer.withUnsafeMutableBytes { raw in
                    followSymlinks
                        ? getxattr(path, name, raw.baseAddress, raw.count)
                        : lgetxattr(path, name, raw.baseAddress, raw.count)
                }
            }
            if result >= 0 { return Array(buffer[0..<result]) }
            let code = Errno(rawValue: errno)
            switch code {
            case .noData: return nil
            case .outOfRange:
                // The value grew beyond the buffer: ask for its size and try again.
                let size: Int = physical.withPlatformString { getxattr($0, name, nil, 0) }
                guard size >= 0 else { throw Errno(rawValue: errno) }
                capacity = max(size, capacity * 2)
            case .interrupted: continue
            default: throw code
            }
        }
    }

    /// Sets the extended attribute `name` of the file at this path to `value`.
    ///
    /// The corresponding C function is `setxattr`.
    public func setExtendedAttribute(named name: String, to value: [UInt8]) throws(Errno) {
        _ = try valueOrErrno {
            physical.withPlatformString { path in
                value.withUnsafeBytes { setxattr(path, name, $0.baseAddress, $0.count, 0) }
            }
        }
    }

    /// Removes the extended attribute `name`; a missing attribute is not an error.
    ///
    /// The corresponding C function is `removexattr`.
    public func removeExtendedAttribute(named name: String) throws(Errno) {
        do {
            _ = try valueOrErrno { physical.withPlatformString { removexattr($0, name) } }
        } catch .noData {
            return
        }
    }

    /// Returns the names of the file's extended attributes: one call for a file with few.
    ///
    /// - Parameter followSymlinks: Whether to list the attributes of a symbolic link's target
    ///   (`listxattr`) or of the link itself (`llistxattr`).
    ///
    /// The corresponding C functions are `listxattr` and `llistxattr`.
    public func extendedAttributeNames(followSymlinks: Bool = true) throws(Errno) -> [String] {
        var capacity = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: capacity)
            let result: Int = physical.withPlatformString { path in
                buffer.withUnsafeMutableBytes { raw in
                    let names = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
                    return followSymlinks ? listxattr(path, names, raw.count) : llistxattr(path, names, raw.count)
                }
            }
            if result >= 0 { return buffer[0..<result].split(separator: 0).map { String(decoding: $0, as: UTF8.self) } }
            let code = Errno(rawValue: errno)
            switch code {
            case .outOfRange:
                // More names than the buffer holds: ask for their size and try again.
                let size: Int = physical.withPlatformString { followSymlinks ? listxattr($0, nil, 0) : llistxattr($0, nil, 0) }
                guard size >= 0 else { throw Errno(rawValue: errno) }
                capacity = max(size, capacity * 2)
            case .interrupted: continue
            default: throw code
            }
        }
    }
}
#endif
