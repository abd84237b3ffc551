/// Where an item of the drive stands with the server: the ubiquitous-item keys
/// (`NSMetadataUbiquitousItemIsUploadedKey`, `…IsUploadingKey`, `…IsDownloadingKey`, the errors)
/// and Folio's pinned key are computed from it.
package struct UbiquitousSyncState: Sendable, Equatable {
    /// The server has this content: it was synced and has not changed here since (a placeholder's
    /// content is the server's). False: new or changed here, waiting to be uploaded or on its way.
    package var isUploaded: Bool
    /// Its content is being downloaded now (a coordinated read of a placeholder).
    package var isDownloading: Bool
    /// It, or a folder above it, is pinned: kept downloaded.
    package var isPinned: Bool
    /// Why the last pass that tried it deferred it (an upload's failure when it is not uploaded, a
    /// download's otherwise).
    package var error: String?
    /// How much of its download is done (0…100), while it downloads (a pass's download, or a
    /// materialization, whoever asked for it); nil otherwise.
    package var percentDownloaded: Double?

    /// The ubiquity resource keys (Apple's `URLResourceKey` names) whose values differ between two
    /// states of an item: what its presenters are told changed.
    package static func changedKeys(from old: UbiquitousSyncState?, to new: UbiquitousSyncState?) -> [String] {
        var keys: [String] = []
        if old?.isUploaded != new?.isUploaded { keys += ["NSURLUbiquitousItemIsUploadedKey", "NSURLUbiquitousItemIsUploadingKey"] }
        if old?.isDownloading != new?.isDownloading { keys += ["NSURLUbiquitousItemIsDownloadingKey", "NSURLUbiquitousItemDownloadingStatusKey"] }
        if old?.error != new?.error { keys += ["NSURLUbiquitousItemUploadingErrorKey", "NSURLUbiquitousItemDownloadingErrorKey"] }
        return keys
    }

    package init(isUploaded: Bool, isDownloading: Bool = false, isPinned: Bool = false, error: String? = nil, percentDownloaded: Double? = nil) {
        self.isUploaded = isUploaded
        self.isDownloading = isDownloading
        self.isPinned = isPinned
        self.error = error
        self.percentDownloaded = percentDownloaded
    }
}
