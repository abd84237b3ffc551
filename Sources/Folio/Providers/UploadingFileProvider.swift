package import Foundation

/// What an upload sends: a file, or the bytes of a small one, already in memory.
package enum UploadContents: Sendable {
    case file(URL)
    /// A small file's bytes, read whole (the sync engine's snapshot of it).
    case bytes([UInt8])

    /// The file, when the contents are one.
    package var file: URL? {
        if case .file(let url) = self { url } else { nil }
    }
}

/// A provider whose uploads can take a small file's bytes from memory (the built-in WebDAV and S3
/// providers, in the process). The sync engine reads and hashes a small file before it sends it:
/// through the public calls, which take a file, that snapshot was written to a private file and read
/// back by the provider (two opens, a write and a hop to the file-work pool for each file).
package protocol UploadingFileProvider: FileProvider {
    /// ``FileProvider/createItem(basedOn:fields:contents:options:request:)``, sending `contents`.
    func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, uploading contents: UploadContents?,
        options: FileProviderCreateItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult

    /// ``FileProvider/modifyItem(_:baseVersion:changedFields:contents:options:request:)``, sending `contents`.
    func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, uploading contents: UploadContents?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult
}
