import Folio
import Foundation

extension SyncEngine {
    /// A link to the server's copy of the file `path`, valid until the returned date (`expiration`,
    /// or the provider's longest when that is sooner): what anyone may download without the
    /// drive's credentials. Refused for a provider that cannot make such links (WebDAV), for a
    /// folder, for a file the server does not have, and for one with changes the server lacks (the
    /// link would give the older content).
    func publishingURL(_ path: SyncPath, expiration: Date) async throws -> (url: URL, expiration: Date) {
        guard let publishing = provider as? any FileProviderPublishing else {
            throw CoordinationFailure(
                kind: .failed, message: "this drive's server cannot publish links (an S3 drive can: presigned URLs); “\(path)” was not published")
        }
        let base = try await journal.base()
        guard let entry = base[path] else {
            throw FileProviderError(.noSuchItem, message: "“\(path)” is not on the server yet (sync first)")
        }
        guard !entry.isFolder else { throw FileProviderError(.noSuchItem, message: "“\(path)” is a folder: only files can be published") }
        if !entry.isPlaceholder {
            guard let synced = entry.fingerprint, replica.fingerprint(path) == synced else {
                throw FileProviderError(.unsyncedEdits, message: "“\(path)” has changes the server does not have yet (sync first)")
            }
        }
        let until = min(expiration, Date() + TimeInterval(publishing.longestPublishing.components.seconds))
        let request = FileProviderRequest(temporaryDirectory: URL(fileURLWithPath: replica.staging))
        let url = try await publishing.publishingURL(for: FileProviderItemIdentifier(entry.identifier), expiration: until, request: request)
        return (url, until)
    }
}
