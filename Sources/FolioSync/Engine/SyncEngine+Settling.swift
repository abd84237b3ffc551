import Folio
import Foundation
import Logging

/// An upload whose new version the server's reply did not name (Apache's PUT replies name no
/// ETag): its base waits for ``SyncEngine/settleVersions(_:listedCounts:request:)``.
struct UnsettledUpload: Sendable {
    /// The base the upload makes, but for its version.
    var base: BaseEntry
    /// The server folder holding the file, and the file.
    var folder: FileProviderItemIdentifier
    var identifier: FileProviderItemIdentifier
    /// The bytes sent; the server's clock while the write ran (the reply's date: the
    /// ``FileProviderItem/contentModificationDate`` of the item the write returned); and how long
    /// the provider's call took, as this process measured it.
    var size: Int64?
    var written: Date?
    var elapsed: TimeInterval

    /// Whether the listed `item` is what was sent: the size sent, last modified while the write
    /// ran by the server's clock (servers date replies and list times to the second: within
    /// `elapsed` of `written`, and the second after). A write by someone else of the same size
    /// ending within that window would pass; a HEAD after each PUT has a window too (between the
    /// two requests), and needs no size to match.
    func isSent(_ item: FileProviderItemRecord) -> Bool {
        guard let size, let written, let modified = item.contentModificationDate, !item.itemVersion.contentVersion.isEmpty else { return false }
        let second = modified.timeIntervalSince1970.rounded(.down)
        return item.size == size && second >= (written.timeIntervalSince1970 - elapsed).rounded(.down)
            && second <= (written.timeIntervalSince1970 + elapsed).rounded(.down) + 1
    }
}

extension SyncEngine {
    /// The bases of `unsettled` uploads, with the versions the server lists for them now: one listing
    /// of each folder written to (a request per folder, where a request per file asked each file's
    /// version after its upload), or, where the folder holds many more files than were written to
    /// it (`listedCounts`: the pass's listing's items by folder), a request for each of those files. A file listed as something other
    /// than what was sent (another size, a later date), or not listed, keeps an empty version: the
    /// next pass takes the server's file for a change, and downloads it (the local content kept as a
    /// version), or, for a file edited since, knows it for its own upload from the unfinished
    /// transfer kept.
    func settleVersions(
        _ unsettled: [SyncPath: UnsettledUpload], listedCounts: [FileProviderItemIdentifier: Int], request: FileProviderRequest
    ) async -> [(SyncPath, BaseEntry?)] {
        var asks: [FileProviderItemIdentifier] = []
        var folders: [FileProviderItemIdentifier] = []
        let lister = provider as? any FolderListingFileProvider
        for (folder, uploads) in Dictionary(grouping: unsettled.values, by: \.folder) {
            // A listing's entries cost far less than requests: worth it unless most are not needed.
            if lister != nil, uploads.count * 16 >= listedCounts[folder, default: 0] {
                folders.append(folder)
            } else {
                asks += uploads.map(\.identifier)
            }
        }
        var listed: [FileProviderItemIdentifier: FileProviderItemRecord] = [:]
        await withTaskGroup(of: [FileProviderItemRecord].self) { group in
            var pendingFolders = folders.makeIterator(), pendingAsks = asks.makeIterator()
            func startNext() {
                if let folder = pendingFolders.next(), let lister {
                    group.addTask { [logger] in
                        do {
                            return try await lister.listedItems(in: folder)
                        } catch {
                            logger.notice("a folder written to could not be listed", metadata: ["folder": "\(folder)", "error": "\(error)"])
                            return []
                        }
                    }
                } else if let identifier = pendingAsks.next() {
                    group.addTask { [provider] in
                        (try? await provider.item(for: identifier, request: request)).map { [FileProviderItemRecord($0)] } ?? []
                    }
                }
            }
            for _ in 0..<concurrency { startNext() }
            for await items in group {
                for item in items { listed[item.itemIdentifier] = item }
                startNext()
            }
        }
        var settled = 0
        let bases = unsettled.map { path, upload -> (SyncPath, BaseEntry?) in
            var base = upload.base
            if let item = listed[upload.identifier], upload.isSent(item) {
                base.version = item.itemVersion.contentVersion
                settled += 1
                unfinished[path] = nil
            }
            // Unsettled, the upload stays an unfinished transfer: the next pass knows the server's
            // content for this device's own (an edit made since is sent over it, not a conflict).
            return (path, base)
        }
        if settled < unsettled.count {
            logger.notice("uploads the server lists otherwise than sent: taken for changes made elsewhere", metadata: ["count": "\(unsettled.count - settled)"])
        }
        return bases
    }
}
