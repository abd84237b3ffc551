#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AsyncHTTPClient
package import Crypto
public import Folio
package import FolioSystem
public import Foundation
import Logging
import NIOCore

/// A provider over a WebDAV server (RFC 4918): Apache mod_dav, Nextcloud, WsgiDAV, rclone, nginx.
///
/// - Identifiers are paths below the base URL (WebDAV has no stable file ids), so a rename or move
///   gives the item a new identifier, which `modifyItem` returns.
/// - The content version is the server's ETag (a weak `W/` prefix dropped: Apache marks an ETag weak
///   for a second after a write, then the same value turns strong).
/// - Writes are conditional: `If-None-Match: *` to create, `If-Match` with the base ETag to modify
///   or delete. For a server that ignores those headers (probed once: `rclone serve webdav`, nginx),
///   the provider checks the base with PROPFIND first and writes through a temporary name and
///   `MOVE`, so a sequential conflicting change is still caught; two writes racing within the same
///   few milliseconds are not, and the system keeps every replaced local content as a version.
/// - Changes are found by listing the whole tree and comparing it with the previous listing: a
///   listing that fails or is refused (malformed, too large, hostile names) throws, so absence is
///   never inferred from a broken listing.
public actor WebDAVProvider: HashingFileProvider, FolderListingFileProvider, WorkingSetFileProvider, UploadingFileProvider, RemoteTreeProvider {
    /// What the server does with conditional requests and tags, probed on first write.
    struct Profile {
        var honoursConditions: Bool
        /// Whether a HEAD's `ETag` is the tag the server lists (`getetag`): then a file just
        /// written, when the PUT's reply named no tag (Apache's does not), is asked for its tag with
        /// a HEAD, which costs the server far less than a PROPFIND.
        var headTagIsListed: Bool
    }

    let dav: WebDAVClient
    /// Items per page.
    public let pageSize: Int
    private var profile: Profile?
    /// The probe under way, which calls made meanwhile wait for.
    private var probing: Task<Profile, any Error>?
    var listing = ListingSnapshot()
    /// The last walk's number and each folder's listing at that walk, by path: what a reply that
    /// comes back the same gives again. A walk keeps only the folders it listed.
    var folderListings: (walk: Int, folders: [String: FolderListing]) = (0, [:])
    /// The walks begun so far.
    private var walks = 0
    /// The folders the last walk listed, and how many of them the server answered as before (not
    /// read again).
    package private(set) var lastWalk: (folders: Int, unchanged: Int) = (0, 0)
    var busy: Set<String> = []
    var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    let logger = Logger(label: "folio.provider.webdav")

    /// Names the provider gives its own temporary files and probes; listings leave them out.
    static let temporaryPrefix = ".folio-upload-"

    /// A provider over the WebDAV collection at `baseURL`, with Basic credentials if given; a request
    /// without content fails after `requestTimeout`.
    public init(baseURL: URL, user: String? = nil, password: String? = nil, pageSize: Int = 200, requestTimeout: Duration = .seconds(60)) {
        var base = baseURL.absoluteString
        if !base.hasSuffix("/") { base += "/" }
        let authorization = user.map { "Basic " + Data("\($0):\(password ?? "")".utf8).base64EncodedString() }
        let (seconds, attoseconds) = requestTimeout.components
        dav = WebDAVClient(
            base: URL(string: base)!, authorization: authorization, client: HTTPTransfer.sharedClient,
            requestTimeout: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        self.pageSize = pageSize
    }

    /// The items listed in a folder, and the digest of the server's reply they were read from.
    package struct FolderListing: Sendable {
        package var digest: SHA256Digest
        package var items: [FileProviderItemRecord]
    }

    // MARK: Identifiers and items

    /// The item a listed resource stands for, or nil for what the provider does not serve.
    func record(_ resource: DAVResource) -> FileProviderItemRecord? {
        var types = FileNameTypes()
        return record(resource, &types)
    }

    /// The item `resource` describes, its type read through `types` (a listing's, shared by its items).
    func record(_ resource: DAVResource, _ types: inout FileNameTypes) -> FileProviderItemRecord? {
        guard let relative = DAVPath.relative(resource.href, basePath: dav.basePath, origin: dav.origin) else {
            logger.warning("a listed name was refused", metadata: ["href": "\(resource.href.prefix(300))"])
            return nil
        }
        let name = Self.name(of: relative)
        guard !name.hasPrefix(Self.temporaryPrefix) else { return nil }
        let etag = ETag.opaque(resource.etag)
        let modified = resource.lastModified.flatMap(ETag.date)
        let content: Data
        if resource.isCollection {
            content = Data()
        } else if let etag, ETag.isHeaderSafe(etag), etag.utf8.count <= FileProviderItemVersion.maximumLength {
            content = Data(etag.utf8)
        } else {
            // No usable ETag (nginx lists none): a digest of size and date stands in, as text.
            content = Data(("folio:" + SHA256.hash(data: Data("\(resource.contentLength ?? -1) \(resource.lastModified ?? "") \(etag ?? "")".utf8)).hexadecimal).utf8)
        }
        let metadata = Self.metadataVersion(relative, etag: etag ?? resource.lastModified ?? "")
        return FileProviderItemRecord(
            itemIdentifier: Self.identifier(relative), parentItemIdentifier: Self.identifier(Self.folder(of: relative)), filename: name,
            contentType: resource.isCollection ? .folder : types.type(ofFile: name),
            itemVersion: FileProviderItemVersion(contentVersion: content, metadataVersion: metadata),
            size: resource.isCollection ? nil : resource.contentLength, contentModificationDate: modified,
            fileSystemFlags: resource.isExecutable == true && !resource.isCollection ? [.userReadable, .userWritable, .userExecutable] : [.userReadable, .userWritable])
    }

    /// The metadata version of the item at `relative` with `etag`: the same whether the item came from
    /// a listing or from a write's or a download's reply.
    /// (SHA-256 of the path, a zero byte and the tag, hashed from the strings' own bytes: a listing
    /// makes one for each of its items.)
    static func metadataVersion(_ relative: String, etag: String) -> Data {
        var hasher = SHA256()
        var relative = relative, etag = etag
        relative.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        withUnsafeBytes(of: UInt8(0)) { hasher.update(bufferPointer: $0) }
        etag.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return hasher.finalize().withUnsafeBytes { Data($0) }
    }

    /// The file item at `relative` as a reply describes it (a PUT's or a GET's ETag, the size sent or
    /// received), or nil when the reply had no usable ETag. Its type is `contentType` when the
    /// caller knows the name's type (a listing's item), else looked up.
    func fileRecord(_ relative: String, etag header: String?, size: Int64?, contentType: UTType? = nil) -> FileProviderItemRecord? {
        guard let etag = ETag.opaque(header), ETag.isHeaderSafe(etag), etag.utf8.count <= FileProviderItemVersion.maximumLength else { return nil }
        return fileRecord(
            relative, FileProviderItemVersion(contentVersion: Data(etag.utf8), metadataVersion: Self.metadataVersion(relative, etag: etag)), size: size,
            date: Date(), contentType: contentType)
    }

    /// The file item at `relative` with `version`, `size` bytes, dated `date`, of the type its name
    /// gives (`contentType`, when the caller knows it).
    func fileRecord(_ relative: String, _ version: FileProviderItemVersion, size: Int64?, date: Date, contentType: UTType? = nil) -> FileProviderItemRecord {
        let name = Self.name(of: relative)
        return FileProviderItemRecord(
            itemIdentifier: Self.identifier(relative), parentItemIdentifier: Self.identifier(Self.folder(of: relative)), filename: name,
            contentType: contentType ?? UTType.ofFile(named: name), itemVersion: version, size: size, contentModificationDate: date)
    }

    /// The item at `relative` now, or noSuchItem.
    func current(_ relative: String) async throws -> FileProviderItemRecord {
        let resources = try await dav.propfind(relative, depth: 0)
        guard let first = resources.first, let item = record(first), item.itemIdentifier == Self.identifier(relative) else {
            throw FileProviderError.noSuchItem(Self.identifier(relative))
        }
        return item
    }

    /// The folder's children, listed now. The listing is kept for the next walk, which then does not
    /// read the folder again if the server answers it the same (the sync engine lists the folders it
    /// wrote to after its uploads: the next pass finds them as they were left). The walk it joins
    /// no longer repeats the last one as a whole.
    package func listedItems(in container: FileProviderItemIdentifier) async throws -> [FileProviderItemRecord] {
        let relative = Self.relative(container)
        let listing = try await listing(of: relative, previous: folderListings.folders[relative])
        folderListings.folders[relative] = listing
        folderListings.walk = 0
        return listing.items
    }

    /// The children of the folder at `relative`.
    func children(_ relative: String) async throws -> [FileProviderItemRecord] {
        try await listing(of: relative, previous: nil).items
    }

    /// The children of the folder at `relative` with the digest of the reply they were read from:
    /// `previous`'s items again when the server's reply has not changed since.
    package func listing(of relative: String, previous: FolderListing?) async throws -> FolderListing {
        let folder = Self.identifier(relative)
        switch try await dav.list(relative.isEmpty ? "" : relative + "/", unless: previous?.digest) {
        case .unchanged:
            guard let previous else { preconditionFailure("a listing is unchanged only from one the caller had") }
            return previous
        case .read(let resources, let digest):
            await removeStaleTemporaries(resources)
            var types = FileNameTypes()
            let items = resources.compactMap { record($0, &types) }.filter { $0.itemIdentifier != folder && $0.parentItemIdentifier == folder }
            return FolderListing(digest: digest, items: items)
        }
    }

    /// How long a temporary upload may stand unwritten before a listing takes it for a killed
    /// upload's.
    static let staleTemporaryAge: TimeInterval = 600

    /// Removes the temporary files (`.folio-upload-…`) of uploads killed before their MOVE into
    /// place, once unwritten for ``staleTemporaryAge``: a listing sees them, and no one else will.
    func removeStaleTemporaries(_ resources: [DAVResource]) async {
        for resource in resources where !resource.isCollection {
            guard let relative = DAVPath.relative(resource.href, basePath: dav.basePath, origin: dav.origin),
                Self.name(of: relative).hasPrefix(Self.temporaryPrefix),
                let modified = resource.lastModified.flatMap(ETag.date), Date().timeIntervalSince(modified) > Self.staleTemporaryAge
            else { continue }
            if let reply = try? await dav.send("DELETE", relative), (200..<300).contains(reply.status) {
                logger.notice("removed a temporary upload a killed transfer left behind", metadata: ["path": "\(relative.prefix(300))"])
            }
        }
    }

    func listChildren(of container: FileProviderItemIdentifier) async throws -> [FileProviderItemRecord] {
        let listed = try await children(Self.relative(container))
        if listed.isEmpty, container != .rootContainer, try await current(Self.relative(container)).isFolder == false {
            throw FileProviderError(.noSuchItem, message: "\(container) is not a folder")
        }
        return listed
    }

    /// Every item below the root, one PROPFIND per folder (Depth: infinity is often disabled). A
    /// folder whose reply is the same as at the last walk is not read again (``folderListings``);
    /// when none is read again, and no folder came or went, the walk repeats the last one.
    func walk() async throws -> ListingWalk {
        var found: [FileProviderItemIdentifier: FileProviderItemRecord] = [:]
        var folders = [""]
        let previous = folderListings
        walks += 1
        let number = walks
        var listed: [String: FolderListing] = [:]
        var reused = 0
        // Sixteen listings at a time (as many as the connections to one server); any failure
        // fails the walk.
        try await withThrowingTaskGroup(of: (String, FolderListing).self) { group in
            var running = 0
            while true {
                while running < 16, let folder = folders.popLast() {
                    group.addTask { (folder, try await self.listing(of: folder, previous: previous.folders[folder])) }
                    running += 1
                }
                guard running > 0, let (folder, listing) = try await group.next() else { break }
                running -= 1
                listed[folder] = listing
                if previous.folders[folder]?.digest == listing.digest { reused += 1 }
                for item in listing.items {
                    found[item.itemIdentifier] = item
                    if item.isFolder { folders.append(Self.relative(item.itemIdentifier)) }
                }
            }
        }
        folderListings = (number, listed)
        lastWalk = (listed.count, reused)
        return ListingWalk(items: found, number: number, repeats: reused == listed.count && listed.count == previous.folders.count ? previous.walk : nil)
    }

    // MARK: FileProvider (reading)

    public func item(for identifier: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> any FileProviderItem {
        if identifier == .rootContainer {
            return FileProviderItemRecord(itemIdentifier: .rootContainer, parentItemIdentifier: .rootContainer, filename: "", contentType: .folder)
        }
        return try await current(Self.relative(identifier))
    }

    public func enumerateItems(
        in container: FileProviderItemIdentifier, startingAt page: FileProviderPage, request: FileProviderRequest
    ) async throws -> FileProviderItemPage {
        try await self.page(of: container, startingAt: page)
    }

    public func currentSyncAnchor(for container: FileProviderItemIdentifier, request: FileProviderRequest) async throws
        -> FileProviderSyncAnchor
    {
        try await anchorNow()
    }

    public func enumerateChanges(
        in container: FileProviderItemIdentifier, from anchor: FileProviderSyncAnchor, request: FileProviderRequest
    ) async throws -> FileProviderChangeBatch {
        try await changes(in: container, since: anchor)
    }

    public func fetchContents(
        for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest, progress: Progress
    ) async throws -> (contents: URL, item: any FileProviderItem) {
        let fetched = try await fetchHashedContents(for: identifier, version: version, request: request, progress: progress)
        return (fetched.contents, fetched.item)
    }

    package func fetchHashedContents(
        for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest, progress: Progress
    ) async throws -> (contents: URL, item: any FileProviderItem, sha256: Data, written: FileStatus) {
        try Task.checkCancellation()
        let relative = Self.relative(identifier)
        // A file the last listing knows needs no PROPFIND: the GET's reply describes what it sent.
        let known = listing.items?[identifier]
        var item: FileProviderItemRecord
        if let known, !known.isFolder { item = known } else { item = try await current(relative) }
        guard !item.isFolder else { throw FileProviderError(.noSuchItem, message: "\(identifier) is a folder") }
        let destination = request.fetchDestination()
        // The caller's landing runs only when nothing after the file can fail the fetch: not when a
        // version is asked for (checked once the reply is in).
        let landing = version == nil ? request.landing : nil
        let received = try await withTaskCancellationHandler {
            try await dav.download(relative, to: destination, progress: progress, durable: request.flushesContents, arriving: request.arriving, landing: landing)
        } onCancel: {
            progress.cancel()
        }
        // The reply's ETag describes the bytes received; the listing may be older.
        // The name's type is the listed item's (the same name, looked up moments ago).
        if var described = fileRecord(relative, etag: received.etag, size: received.size, contentType: item.contentType) {
            // What only a listing tells (the executable bit) stays the listing's.
            described.fileSystemFlags = item.fileSystemFlags
            item = described
        } else {
            item.size = received.size
        }
        if let version, version.contentVersion != item.itemVersion.contentVersion {
            unlink(destination)
            throw FileProviderError(.versionNoLongerAvailable, message: "\(item.filename) changed since that version")
        }
        return (URL(fileURLWithPath: destination, isDirectory: false), item, received.sha256, received.written)
    }

    // MARK: Profile

    /// Whether the server honours `If-Match` (probed once with a file of the provider's own; calls
    /// made while the probe runs wait for it rather than each probing again).
    func conditionsHonoured() async throws -> Bool {
        try await probedProfile().honoursConditions
    }

    /// The server's profile, probed on first use.
    func probedProfile() async throws -> Profile {
        if let profile { return profile }
        let probe = probing ?? Task { try await self.probe() }
        probing = probe
        do {
            let found = try await probe.value
            profile = found
            return found
        } catch {
            // A failed probe is tried again by the next call (unless another has begun since).
            if probing == probe { probing = nil }
            throw error
        }
    }

    private func probe() async throws -> Profile {
        let probe = Self.temporaryPrefix + "probe-" + UUID().uuidString
        let created = try await dav.send("PUT", probe, body: Array("probe".utf8))
        guard (200..<300).contains(created.status) else { throw dav.statusError(created.status, "PUT", probe, body: created.body) }
        let conditional = try await dav.send("PUT", probe, headers: [("If-Match", "\"folio-no-such-etag\"")], body: Array("probe 2".utf8))
        let head = try? await dav.send("HEAD", probe)
        let listed = try? await dav.propfind(probe, depth: 0).first?.etag
        _ = try? await dav.send("DELETE", probe)
        let headTag = head.flatMap { $0.status == 200 ? ETag.opaque($0.header("ETag")) : nil }
        let found = Profile(honoursConditions: conditional.status == 412, headTagIsListed: headTag != nil && headTag == ETag.opaque(listed))
        logger.info(
            "server probed",
            metadata: ["base": "\(dav.base.absoluteString)", "honoursIfMatch": "\(found.honoursConditions)", "headTagIsListed": "\(found.headTagIsListed)"])
        return found
    }

    /// The file this provider just wrote at `relative` (`size` bytes sent), answered by `reply`:
    /// with the tag the reply names; else, for a caller that learns versions later
    /// (``FileProviderRequest/versionMayFollow``), with none, dated by the reply's `Date` (the
    /// server's clock while the request ran: Apache takes it when the request arrives, others when
    /// they answer); else asked for (``written(_:size:)``).
    func written(_ relative: String, size: Int64, reply: WebDAVClient.Reply, request: FileProviderRequest) async throws -> FileProviderItemRecord {
        if let item = fileRecord(relative, etag: reply.header("ETag"), size: size) { return item }
        if request.versionMayFollow, let date = reply.header("Date").flatMap(ETag.date) {
            return fileRecord(relative, FileProviderItemVersion(contentVersion: Data(), metadataVersion: Data()), size: size, date: date)
        }
        return try await written(relative, size: size)
    }

    /// The file this provider just wrote at `relative` (`size` bytes sent), when the write's reply
    /// named no tag: from a HEAD where the server's HEAD and listing agree on tags, else listed.
    func written(_ relative: String, size: Int64) async throws -> FileProviderItemRecord {
        if profile?.headTagIsListed == true {
            // Not from a cache on the way; and only a reply of the size sent describes what was sent.
            let reply = try await dav.send("HEAD", relative, headers: [("Cache-Control", "no-cache")])
            let length = reply.header("Content-Length").flatMap { Int64($0) }
            if reply.status == 200, length == nil || length == size, let item = fileRecord(relative, etag: reply.header("ETag"), size: size) {
                return item
            }
        }
        return try await current(relative)
    }

    /// Sets (or clears) Apache's `executable` property of the file at `relative`, which mod_dav_fs
    /// keeps as the file's execute bit. Whether it was set: a server without the property refuses
    /// it (a 207 with a 403 or 409 for it, or 405), which is no error: the bit is kept only where
    /// the server can keep it.
    func setExecutable(_ relative: String, _ executable: Bool) async -> Bool {
        let body = Array(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <D:propertyupdate xmlns:D="DAV:" xmlns:A="http://apache.org/dav/props/"><D:set><D:prop><A:executable>\(executable ? "T" : "F")</A:executable></D:prop></D:set></D:propertyupdate>
            """.utf8)
        guard let reply = try? await dav.send("PROPPATCH", relative, headers: [("Content-Type", "application/xml; charset=utf-8")], body: body) else { return false }
        let statuses = Self.propstatStatuses(reply.body)
        let set = reply.status == 207 && !statuses.isEmpty && statuses.allSatisfy { (200..<300).contains($0) }
        if !set { logger.debug("the server keeps no executable bit", metadata: ["path": "\(relative)", "status": "\(reply.status)"]) }
        return set
    }

    /// The status codes of a PROPPATCH reply's `propstat` elements (`HTTP/1.1 200 OK` …).
    static func propstatStatuses(_ body: [UInt8]) -> [Int] {
        let text = String(decoding: body.prefix(64 << 10), as: UTF8.self)
        var codes: [Int] = []
        var rest = text[...]
        while let range = rest.range(of: "HTTP/1.") {
            let after = rest[range.upperBound...].dropFirst(2).prefix(3)
            if after.count == 3, after.allSatisfy({ $0.isASCII && $0.isNumber }), let code = Int(after) { codes.append(code) }
            rest = rest[range.upperBound...]
        }
        return codes
    }
}
