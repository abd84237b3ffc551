import Foundation

/// The temporary copy a `.forUploading` read hands its accessor: a copy of a file, or a zip archive
/// of a directory (a package, say). It lives in a private temporary folder, removed with it.
struct UploadSnapshot {
    /// The snapshot the accessor reads.
    let url: URL
    private let folder: URL

    /// Makes the snapshot of the item at `source`.
    ///
    /// - Throws: a `CocoaError` when the item cannot be read or the copy written.
    init(of source: URL) throws {
        let manager = FileManager.default
        folder = manager.temporaryDirectory.appendingPathComponent("folio-upload-\(UUID().uuidString)", isDirectory: true)
        try manager.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: source.path, isDirectory: &isDirectory) else {
            try? manager.removeItem(at: folder)
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: source.path])
        }
        do {
            if isDirectory.boolValue {
                url = folder.appendingPathComponent(source.lastPathComponent + ".zip")
                try ZipWriter.archive(directory: source, to: url)
            } else {
                url = folder.appendingPathComponent(source.lastPathComponent)
                try manager.copyItem(at: source, to: url)
            }
        } catch {
            try? manager.removeItem(at: folder)
            throw error
        }
    }

    /// Removes the snapshot.
    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}
