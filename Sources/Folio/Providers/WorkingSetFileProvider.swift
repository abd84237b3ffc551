/// A provider that lists its whole working set at once, as records in the order of their
/// identifiers' bytes (the built-in WebDAV and S3 providers, which list the server whole for any
/// page of the working set anyway). The sync engine takes it so, not page by page: a page of the
/// public ``FileProvider/enumerateItems(in:startingAt:request:)`` is a hop to the provider, a
/// search for where it starts and each item boxed as `any FileProviderItem` and read back (a quiet
/// pass of 10,000 files spent 10 ms after its listing in 51 such pages).
package protocol WorkingSetFileProvider: FileProvider {
    /// Every item of the working set, listed now, sorted by the bytes of their identifiers, each
    /// identifier once; what the first page of ``FileProviderItemIdentifier/workingSet`` would list
    /// and the pages after it would continue.
    func workingSetItems(request: FileProviderRequest) async throws -> [FileProviderItemRecord]
}
