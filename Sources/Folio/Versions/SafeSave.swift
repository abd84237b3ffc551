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
        let url = URL(fileURLWithPath: path)
        let temporary = temporaryURL(besides: url)
        do {
            try writeNew(data, to: temporary, mode: mode ?? 0o644)
            try commit(temporary, over: url, preservingAttributesOf: attributesSource, mode: mode)
        } catch {
            unlink(temporary.path)
            throw error
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

extension SafeSave {
    /// A new temporary name beside `url` (same folder, so the final rename is atomic).
    package static func temporaryURL(besides url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent)\(marker)\(UInt64.random(in: 0...UInt64.max))")
    }

    /// Writes `data` to a new file at `url` (`commit` flushes it).
    package static func writeNew(_ data: Data, to url: URL, mode: UInt32 = 0o644) throws {
        let fd: SystemPackage.FileDescriptor
        do {
            fd = try SystemPackage.FileDescriptor.open(
                FilePath(url.path), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                permissions: FilePermissions(rawValue: CModeT(mode)))
        } catch {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: error])
        }
        do {
            try fd.closeAfter { _ = try data.withUnsafeBytes { try fd.writeAll($0) } }
        } catch {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: error])
        }
    }

    /// Puts the written temporary item in place of `url`: gives it `mode` and the `user.` attributes
    /// of `attributesSource`, flushes it (a file; data and metadata in one `fsync`), renames it over
    /// `url` (a folder is swapped in), and flushes the folder.
    package static func commit(_ temporary: URL, over url: URL, preservingAttributesOf attributesSource: String?, mode: UInt32?) throws {
        let stamp = ItemStamp(path: temporary.path)
        if let mode { chmod(temporary.path, mode_t(mode)) }
        if let attributesSource { DocumentIdentity.copyUserAttributes(from: attributesSource, to: temporary.path) }
        if !stamp.isDirectory {
            let fd = open(temporary.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0, fsync(fd) == 0 else {
                if fd >= 0 { close(fd) }
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: "cannot flush the new contents: \(String(cString: strerror(errno)))"])
            }
            close(fd)
        }
        if stamp.isDirectory && ItemStamp(path: url.path).isDirectory {
            let old = temporaryURL(besides: url)
            guard rename(url.path, old.path) == 0 else { throw renameError(url) }
            guard rename(temporary.path, url.path) == 0 else {
                rename(old.path, url.path)
                throw renameError(url)
            }
            try? FileManager.default.removeItem(at: old)
        } else {
            guard rename(temporary.path, url.path) == 0 else { throw renameError(url) }
        }
        let directory = url.deletingLastPathComponent().path
        let dirFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            fsync(dirFD)
            close(dirFD)
        }
    }

    private static func renameError(_ url: URL) -> CocoaError {
        CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: "cannot replace \(url.lastPathComponent): \(String(cString: strerror(errno)))"])
    }
}
