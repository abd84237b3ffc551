import FolioSystem
package import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Replaces a document's contents so that a crash at any instant leaves the old or the new
/// contents, never a torn file: a temporary file in the same folder, written, given the old file's
/// mode and `user.` extended attributes (identity, tags), flushed, renamed over the document, and the
/// folder flushed.
package enum SafeSave {
    /// The prefix of the temporary files (`.<name>.folio-save-<random>`); `sweep` removes leftovers.
    static let marker = ".folio-save-"

    /// Writes `data` to `path` safely.
    ///
    /// - Parameters:
    ///   - attributesSource: the file whose `user.` extended attributes the new file keeps (usually
    ///     `path` itself); nil for none.
    ///   - mode: permission bits for the new file (default: the old file's, else 0644).
    package static func write(_ data: Data, to path: String, preservingAttributesOf attributesSource: String?, mode: UInt32? = nil) throws {
        let target = FilePath(path)
        let directory = target.removingLastComponent()
        let name = target.lastComponent?.string ?? "document"
        let temporary = directory.appending(".\(name)\(marker)\(UInt64.random(in: 0...UInt64.max))")
        let permissions = FilePermissions(rawValue: CModeT(mode ?? 0o644))
        let fd: SystemPackage.FileDescriptor
        do {
            fd = try SystemPackage.FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: permissions)
        } catch {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: error])
        }
        do {
            try fd.closeAfter {
                _ = try data.withUnsafeBytes { try fd.writeAll($0) }
                if let mode { _ = fchmod(fd.rawValue, mode_t(mode)) }
                guard fsync(fd.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
            if let attributesSource { DocumentIdentity.copyUserAttributes(from: attributesSource, to: temporary.string) }
            guard rename(temporary.string, path) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            unlink(temporary.string)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: error])
        }
        let dirFD = open(directory.isEmpty ? "." : directory.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            fsync(dirFD)
            close(dirFD)
        }
    }

    /// Removes temporary files a crashed save left beside `path`.
    package static func sweep(besides path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = "." + (path as NSString).lastPathComponent + marker
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return }
        for name in names where name.hasPrefix(prefix) { unlink(directory + "/" + name) }
    }
}
