#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Foundation
public import SystemPackage

/// Writes files so that a crash at any instant leaves either the old or the new content: a
/// temporary file in the same folder, `fsync`, `rename` over the target, then `fsync` of the folder.
public enum AtomicFile {
    /// Replaces the file at `path` with `data`, durably.
    ///
    /// - Throws: `Errno` from the failing call; the target is then untouched and the temporary
    ///   file removed.
    public static func write(_ data: Data, to path: String, permissions: FilePermissions = [.ownerReadWrite]) throws {
        let target = FilePath(path)
        let directory = target.removingLastComponent()
        let temporary = directory.appending(".\(target.lastComponent?.string ?? "file").\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let fd = try FileDescriptor.open(
            temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: permissions)
        do {
            try fd.closeAfter {
                _ = try data.withUnsafeBytes { try fd.writeAll($0) }
                _ = try valueOrErrno { fsync(fd.rawValue) }
            }
            _ = try valueOrErrno { temporary.withPlatformString { t in target.withPlatformString { rename(t, $0) } } }
        } catch {
            _ = temporary.withPlatformString { unlink($0) }
            throw error
        }
        let dirFD = try FileDescriptor.open(directory.isEmpty ? "." : directory, .readOnly, options: [.directory, .closeOnExec])
        try dirFD.closeAfter { _ = try valueOrErrno { fsync(dirFD.rawValue) } }
    }
}
