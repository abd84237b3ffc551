/// A provider that lists a folder's items in one request, whatever their number (the built-in
/// WebDAV provider: one `PROPFIND` of depth 1). The sync engine learns from it, for each folder a
/// pass wrote to, the versions the server's write replies did not name
/// (``FileProviderRequest/versionMayFollow``).
package protocol FolderListingFileProvider: FileProvider {
    /// The items in the folder `container` as the server lists them now.
    func listedItems(in container: FileProviderItemIdentifier) async throws -> [FileProviderItemRecord]
}
