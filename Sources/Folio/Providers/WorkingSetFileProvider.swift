/// A provider that lists its whole working set at once (the built-in WebDAV and S3 providers, which
/// list the server whole for any page of the working set anyway). The sync engine takes it so, not
/// page by page: a page of the public ``FileProvider/enumerateItems(in:startingAt:request:)`` is a
/// hop to the provider, a search for where it starts and each item boxed as `any FileProviderItem`
/// and read back, after the whole listing was sorted for the pages' order (the sort alone took
/// 7 ms of a 10,000-file pass, after its listing).
package protocol WorkingSetFileProvider: FileProvider {
    /// Every item of the working set, listed now, by identifier: what the pages of
    /// ``FileProviderItemIdentifier/workingSet`` would list, in no order.
    func workingSetItems(request: FileProviderRequest) async throws -> [FileProviderItemIdentifier: FileProviderItemRecord]
}
