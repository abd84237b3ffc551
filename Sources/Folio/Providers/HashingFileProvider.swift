package import FolioSystem
package import Foundation

/// A provider that hashes what it downloads as it writes it (the built-in WebDAV and S3 providers):
/// the sync engine then need not read a fetched file again to know its content hash.
package protocol HashingFileProvider: FileProvider {
    /// ``FileProvider/fetchContents(for:version:request:progress:)``, with the SHA-256 of the
    /// contents written and the file's status once written (flushed to disk first when the request
    /// asks, ``FileProviderRequest/flushesContents``).
    func fetchHashedContents(
        for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest, progress: Progress
    ) async throws -> (contents: URL, item: any FileProviderItem, sha256: Data, written: FileStatus)
}
