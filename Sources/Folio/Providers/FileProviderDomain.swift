public import Foundation

/// A provider's account or root (Apple's `NSFileProviderDomain`): what the system replicates into one
/// local folder.
public struct FileProviderDomain: Hashable, Sendable, Codable {
    /// The domain's identifier, unique among the user's domains.
    public var identifier: FileProviderDomainIdentifier
    /// The name shown to the user.
    public var displayName: String
    /// Whether the domain is cut off from its server for now.
    public var isDisconnected = false
    /// Whether the user turned the domain on.
    public var userEnabled = true
    /// Whether the domain is hidden from the user.
    public var isHidden = false
    /// Whether the system replicates the domain on disk (always, here).
    public var isReplicated: Bool { true }

    /// A domain with its identifier and display name.
    public init(identifier: FileProviderDomainIdentifier, displayName: String) {
        self.identifier = identifier
        self.displayName = displayName
    }
}

/// Who asked for a call, and where the provider may put files (Apple's `NSFileProviderRequest`).
public struct FileProviderRequest: Sendable {
    /// The executable that caused the request, when known.
    public var requestingExecutable: URL?
    /// Whether the system itself asked (a sync pass), not an app.
    public var isSystemRequest: Bool
    /// A folder on the replica's volume where the provider writes fetched contents; the system moves
    /// the file it returns out of it, so the provider must not touch that file afterwards.
    public var temporaryDirectory: URL
    /// Whether the caller takes a written item whose content version is not known yet (empty, with
    /// the server's time of the write as its `contentModificationDate`) when the server's reply to
    /// the write named none, and learns the version later from a listing
    /// (``FolderListingFileProvider``): the sync engine does, for a pass's uploads, saving a request
    /// per file. Folio's own: Apple's request has no such field.
    package var versionMayFollow = false
    /// Whether the caller records what it fetches as synced, so a provider that writes the fetched
    /// file itself (``HashingFileProvider``) flushes it to disk before it returns it: the sync
    /// engine's downloads, which then need not open each file again. Folio's own.
    package var flushesContents = false
    /// How many folders in ``temporaryDirectory`` (`fetched-0` …, made by the caller) fetched files
    /// are spread over; 0: none, files go in the folder itself. A file system creates a file under
    /// its folder's lock (ext4 allocates the inode there, slowly while many were deleted recently),
    /// so concurrent downloads into one folder wait for each other: the sync engine's pass spreads
    /// them (a fifth of a 5,000-file download's time, measured). Folio's own.
    package var fetchFolders = 0
    /// Follows a fetched file as it is written (``ArrivingContents``): a provider that writes the
    /// file itself reports each piece written. Folio's own.
    package var arriving: ArrivingContents?
    /// Work a provider that writes the fetched file itself runs where it finishes the file
    /// (``FetchLanding``): the sync engine's downloads land so. Folio's own.
    package var landing: FetchLanding?

    /// A request.
    public init(requestingExecutable: URL? = nil, isSystemRequest: Bool = true, temporaryDirectory: URL) {
        self.requestingExecutable = requestingExecutable
        self.isSystemRequest = isSystemRequest
        self.temporaryDirectory = temporaryDirectory
    }
}
