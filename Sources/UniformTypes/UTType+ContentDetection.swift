public import Foundation
package import FolioSystem
package import SystemPackage

extension UTType {
    /// How a file's content type was decided.
    public enum DetectionSource: String, Sendable, Hashable, Codable {
        /// The file is a directory, package, symbolic link or special file.
        case fileKind = "kind"
        /// The `user.mime_type` extended attribute.
        case extendedAttribute = "xattr"
        /// The file name (shared-mime-info globs or a declared extension).
        case name
        /// The file's first bytes (shared-mime-info magic).
        case content
        /// The bytes look like text and nothing more specific matched.
        case textHeuristic = "text"
        /// Nothing matched: the generic type.
        case fallback
    }

    /// Returns the content type of the item at `url`, as `URLResourceValues.contentType` does on
    /// Apple's systems, and how it was decided.
    ///
    /// Directories are folders unless their extension names a package type; symbolic links are
    /// `public.symlink` (the link itself is examined). For regular files the `user.mime_type`
    /// extended attribute wins, then the name (shared-mime-info globs, then declared extensions);
    /// when the name says nothing, or names several types, the first bytes are matched against
    /// shared-mime-info magic, then checked for text.
    ///
    /// - Throws: `CocoaError(.fileReadNoSuchFile)` when nothing is at `url`, or another
    ///   `CocoaError` for other failures.
    public static func contentType(ofItemAt url: URL) throws -> (type: UTType, source: DetectionSource) {
        try contentType(ofItemAt: url, database: TypeRegistry.shared.database)
    }

    static func contentType(ofItemAt url: URL, database: TypeDatabase) throws -> (type: UTType, source: DetectionSource) {
        let path = FilePath(url.path)
        let status: FileStatus
        do {
            status = try FileStatus(path: path)
        } catch {
            throw CocoaError.error(fromErrno: error, path: url.path)
        }
        return contentType(named: url, status: status, reading: path, database: database)
    }

    /// The type of the item named `url` whose status is `status`, its attributes and bytes read
    /// at `reading` — an open descriptor's `/proc/self/fd` path, so that what is sniffed is the
    /// item checked, whatever `url` names by now.
    package static func contentType(named url: URL, status: FileStatus, reading path: FilePath) -> (type: UTType, source: DetectionSource) {
        contentType(named: url, status: status, reading: path, database: TypeRegistry.shared.database)
    }

    static func contentType(named url: URL, status: FileStatus, reading path: FilePath, database: TypeDatabase) -> (type: UTType, source: DetectionSource) {
        func declared(_ identifier: String) -> UTType { UTType(identifier, database: database)! }
        let name = url.lastPathComponent
        let ext = url.pathExtension
        switch status.kind {
        case .directory:
            if !ext.isEmpty, let index = UTType.indexes(
                tag: ext, tagClass: .filenameExtension, conformingTo: declared("com.apple.package"), database: database
            ).first {
                return (UTType(index: index, database: database), .fileKind)
            }
            return (declared("public.folder"), .fileKind)
        case .symbolicLink:
            return (declared("public.symlink"), .fileKind)
        case .blockDevice, .characterDevice, .fifo, .socket, .other:
            if let index = database.index(forMimeType: Self.inodeMimeType(status.kind)) {
                return (UTType(index: index, database: database), .fileKind)
            }
            return (declared("public.item"), .fileKind)
        case .regular:
            break
        }
        if let bytes = try? path.extendedAttribute(named: mimeTypeAttribute), !bytes.isEmpty,
            let index = database.index(forMimeType: String(decoding: bytes, as: UTF8.self).trimmingSpaces().lowercased())
        {
            return (UTType(index: index, database: database), .extendedAttribute)
        }
        let named = database.nameType(fileName: name, pathExtension: ext)
        if named.decided { return (UTType(index: named.index!, database: database), .name) }
        let globbed = named.globbed
        // The name says nothing or is ambiguous: look at the bytes.
        let magic = database.magic()
        let head = status.size == 0 ? [] : Self.readHead(path: path, count: max(magic.extent, 4096))
        if let found = magic.match(head, preferring: globbed) {
            // A sniffed type decides between glob candidates only when it is one of them or a subtype.
            if globbed.isEmpty || globbed.contains(found.mimeType) {
                if let index = database.index(forMimeType: found.mimeType) {
                    return (UTType(index: index, database: database), .content)
                }
            } else if let sniffed = database.index(forMimeType: found.mimeType),
                let candidate = globbed.compactMap({ database.index(forMimeType: $0) }).first(where: {
                    database.conforms(sniffed, to: $0)
                })
            {
                return (UTType(index: candidate, database: database), .content)
            }
        }
        if let index = named.index { return (UTType(index: index, database: database), .name) }
        if Self.looksLikeText(head) { return (declared("public.plain-text"), .textHeuristic) }
        return (declared("public.data"), .fallback)
    }

    /// The extended attribute in which a file names its own MIME type (shared-mime-info's rule),
    /// which decides its type before its name does.
    package static let mimeTypeAttribute = "user.mime_type"

    /// The bytes look like text when they hold no control characters other than whitespace and
    /// backspace (GLib's rule; bytes over 0x7F are allowed). An empty file counts as text, as in GIO.
    static func looksLikeText(_ bytes: [UInt8]) -> Bool {
        for byte in bytes where byte < 0x20 || byte == 0x7F {
            if byte == 0x09 || byte == 0x0A || byte == 0x0B || byte == 0x0C || byte == 0x0D || byte == 0x08 { continue }
            return false
        }
        return true
    }

    /// The first `count` bytes of the regular file at `path`. The file was `lstat`ed as regular,
    /// but another process may have swapped in a FIFO or a device since (`renameat2` with
    /// `RENAME_EXCHANGE`): the open neither blocks (`O_NONBLOCK`) nor follows a link, and what was
    /// opened is checked again before it is read.
    private static func readHead(path: FilePath, count: Int) -> [UInt8] {
        // A descriptor's `/proc/self/fd` path is a link to follow; any other path's last name is not.
        let options: FileDescriptor.OpenOptions = path.string.hasPrefix("/proc/self/fd/") ? [.closeOnExec, .nonBlocking] : [.closeOnExec, .nonBlocking, .noFollow]
        guard let fd = try? FileDescriptor.open(path, .readOnly, options: options) else { return [] }
        defer { try? fd.close() }
        guard (try? FileStatus(of: fd))?.kind == .regular else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        let read = (try? buffer.withUnsafeMutableBytes { try fd.read(into: $0) }) ?? 0
        return Array(buffer[0..<read])
    }

    private static func inodeMimeType(_ kind: FileStatus.Kind) -> String {
        switch kind {
        case .blockDevice: "inode/blockdevice"
        case .characterDevice: "inode/chardevice"
        case .fifo: "inode/fifo"
        case .socket: "inode/socket"
        default: "inode/x-unknown"
        }
    }
}

extension CocoaError {
    /// Maps an `Errno` from a file operation to Apple's reading error codes.
    static func error(fromErrno error: any Error, path: String) -> CocoaError {
        let code: CocoaError.Code
        switch error as? Errno {
        case .noSuchFileOrDirectory?, .notDirectory?: code = .fileReadNoSuchFile
        case .permissionDenied?, .notPermitted?: code = .fileReadNoPermission
        case .fileNameTooLong?: code = .fileReadInvalidFileName
        default: code = .fileReadUnknown
        }
        return CocoaError(code, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: error as NSError])
    }
}
