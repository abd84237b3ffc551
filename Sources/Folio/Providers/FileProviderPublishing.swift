public import Foundation

/// A provider that can hand out a link to a file's content that works without its credentials
/// until it expires (an S3 presigned URL): what `FileManager.url(forPublishingUbiquitousItemAt:expiration:)`
/// gives an app for a drive item. Providers without such links (WebDAV) do not conform, and
/// publishing there is refused.
public protocol FileProviderPublishing: FileProvider {
    /// The longest a link may be valid.
    var longestPublishing: Duration { get }

    /// A link to the current content of the file `identifier`, valid until `expiration` (no later
    /// than ``longestPublishing`` from now). Throws ``FileProviderError/Code/noSuchItem`` for an
    /// item that is gone or is a folder.
    func publishingURL(for identifier: FileProviderItemIdentifier, expiration: Date, request: FileProviderRequest) async throws -> URL
}
