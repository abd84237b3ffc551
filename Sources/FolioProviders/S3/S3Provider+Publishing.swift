public import Folio
public import Foundation

extension S3Provider: FileProviderPublishing {
    /// SigV4's limit: a presigned URL is valid for at most seven days.
    public nonisolated var longestPublishing: Duration { .seconds(7 * 24 * 3600) }

    /// A presigned GET of the file's key: anyone with the URL reads the object without the
    /// provider's credentials until `expiration` (capped at seven days). The key is checked first
    /// (HEAD), so a link to a file that is gone, or to a folder, is refused rather than handed out.
    public func publishingURL(for identifier: FileProviderItemIdentifier, expiration: Date, request: FileProviderRequest) async throws -> URL {
        let relative = Self.relative(identifier)
        guard !relative.isEmpty, !relative.hasSuffix("/") else {
            throw FileProviderError(.noSuchItem, message: "\(identifier) is a folder: only files can be published")
        }
        // The link's date is when it was asked for, before the check: its X-Amz-Expires is then
        // the time asked for (a slow HEAD would shorten it by its own time, to the same end).
        let now = Date()
        _ = try await current(relative)
        let limit = Double(longestPublishing.components.seconds)
        let seconds = Int(min(max(expiration.timeIntervalSince(now), 1), limit).rounded())
        guard let url = s3.presignedURL(prefix + relative, expires: max(seconds, 1), date: now) else {
            throw FileProviderError(.noSuchItem, message: "\(identifier) has no URL")
        }
        return url
    }
}
