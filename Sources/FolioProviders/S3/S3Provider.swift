#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AsyncHTTPClient
import Crypto
public import Folio
package import FolioSystem
public import Foundation
import Logging
import NIOCore

/// A provider over an S3 bucket (AWS S3 or a compatible server: MinIO, Ceph, moto), signed with
/// SigV4, path-style.
///
/// - Identifiers are keys below the provider's prefix. A folder's identifier ends in `/`, like the
///   keys below it, so a file `a` and a folder `a/` never share one; a folder exists while a key
///   starts with it, and an empty one is kept by a zero-byte marker key (`a/`).
/// - The content version is the object's ETag (the MD5 of a single-part upload); the metadata
///   version is a digest of the key and the ETag, so a listing and a write's reply agree.
/// - Writes are conditional: `If-None-Match: *` to create, `If-Match` with the base ETag to modify
///   or delete. For a server that ignores those headers (probed once), the provider compares the base
///   with a HEAD first. Files above the multipart threshold upload in parts, several at a time, and
///   appear whole or not at all.
/// - A rename is a copy and a delete, conditional on the source's ETag; a folder's rename copies
///   every key below it before deleting any, so a failure leaves both, never neither.
/// - Changes are found by listing every key (1,000 a page) and comparing with the previous listing:
///   a listing that fails or is refused throws, so absence is never inferred from it.
public actor S3Provider: HashingFileProvider, WorkingSetFileProvider, UploadingFileProvider, RemoteTreeProvider {
    /// What the server does with conditional requests, probed on first write.
    struct Profile {
        var honoursConditions: Bool
    }

    let s3: S3Client
    /// The keys served are below this prefix ("" or ending in `/`).
    let prefix: String
    /// Items per page.
    public let pageSize: Int
    /// Files at least this large upload in parts.
    let multipartThreshold: Int
    /// The size of each part.
    let partSize: Int
    /// Parts uploaded at once.
    let concurrency: Int
    var listing = ListingSnapshot()
    private var profile: Profile?
    /// The probe under way, which calls made meanwhile wait for.
    private var probing: Task<Profile, any Error>?
    var busy: Set<String> = []
    var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    let logger = Logger(label: "folio.provider.s3")

    /// Names the provider gives its own probes; listings leave them out.
    static let temporaryPrefix = ".folio-upload-"

    /// A provider over `bucket` at `endpoint` (scheme, host and port), keys below `prefix`, signed
    /// with the access key and secret for `region`.
    public init(
        endpoint: URL, bucket: String, prefix: String = "", accessKey: String, secretKey: String, region: String = "us-east-1",
        pageSize: Int = 200, requestTimeout: Duration = .seconds(60), multipartThreshold: Int = 64 << 20, partSize: Int = 16 << 20,
        concurrency: Int = 4
    ) {
        let (seconds, attoseconds) = requestTimeout.components
        s3 = S3Client(
            endpoint: endpoint, bucket: bucket, signer: SigV4Signer(accessKey: accessKey, secretKey: secretKey, region: region, service: "s3"),
            client: HTTPTransfer.sharedClient, requestTimeout: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        var prefix = prefix
        while prefix.hasPrefix("/") { prefix.removeFirst() }
        if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
        self.prefix = prefix
        self.pageSize = pageSize
        self.multipartThreshold = max(multipartThreshold, 5 << 20)
        self.partSize = max(partSize, 5 << 20)
        self.concurrency = max(concurrency, 1)
    }

    // MARK: Identifiers and items

    /// The folder (relative, ending in `/`, or "") holding `relative`.
    static func parent(of relative: String) -> String {
        var path = Substring(relative)
        if path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }

    /// Whether every segment of `relative` can name a file here (not empty, `.` or `..`, no NUL,
    /// at most 255 bytes): a key that cannot is left out of listings.
    static func isServable(_ relative: String) -> Bool {
        var path = Substring(relative)
        if path.hasSuffix("/") { path = path.dropLast() }
        return !path.isEmpty
            && path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
                !$0.isEmpty && $0 != "." && $0 != ".." && !$0.utf8.contains(0) && $0.utf8.count <= 255
            }
    }

    /// A listing's `LastModified` (ISO 8601, with or without fractions of a second).
    static func isoDate(_ text: String) -> Date? {
        (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))) ?? (try? Date(text, strategy: .iso8601))
    }

    /// The item for the key `relative` (below the prefix).
    func record(_ relative: String, etag: String?, size: Int64, modified: Date?) -> FileProviderItemRecord {
        var types = FileNameTypes()
        return record(relative, etag: etag, size: size, modified: modified, types: &types)
    }

    /// The item for the key `relative`, its type read through `types` (a listing's, shared by its items).
    func record(_ relative: String, etag: String?, size: Int64, modified: Date?, types: inout FileNameTypes) -> FileProviderItemRecord {
        let isFolder = relative.hasSuffix("/")
        let name = Self.name(of: relative)
        let tag = ETag.opaque(etag) ?? ""
        let content: Data
        if isFolder {
            content = Data()
        } else if ETag.isHeaderSafe(tag), tag.utf8.count <= FileProviderItemVersion.maximumLength {
            content = Data(tag.utf8)
        } else {
            content = Data(("folio:" + SHA256.hash(data: Data("\(size) \(tag)".utf8)).hexadecimal).utf8)
        }
        let metadata = Data(SHA256.hash(data: Data("\(relative)\u{0}\(isFolder ? "" : tag)".utf8)))
        return FileProviderItemRecord(
            itemIdentifier: Self.identifier(relative), parentItemIdentifier: Self.identifier(Self.parent(of: relative)), filename: name,
            contentType: isFolder ? .folder : types.type(ofFile: name), itemVersion: FileProviderItemVersion(contentVersion: content, metadataVersion: metadata),
            size: isFolder ? nil : size, contentModificationDate: modified)
    }

    /// The item a listed object stands for (a file or a folder marker), or nil for what the provider does not serve.
    func record(_ object: S3Object) -> FileProviderItemRecord? {
        var types = FileNameTypes()
        return record(object, types: &types)
    }

    /// The item a listed object stands for, its type read through `types` (a listing's).
    func record(_ object: S3Object, types: inout FileNameTypes) -> FileProviderItemRecord? {
        guard object.key.hasPrefix(prefix) else { return nil }
        let relative = String(object.key.dropFirst(prefix.count))
        guard !relative.isEmpty else { return nil }
        guard Self.isServable(relative) else {
            logger.warning("a listed key was refused", metadata: ["key": "\(object.key.prefix(300))"])
            return nil
        }
        guard !(relative.split(separator: "/").last ?? "").hasPrefix(Self.temporaryPrefix) else { return nil }
        return record(relative, etag: object.etag, size: object.size, modified: object.lastModified.flatMap(Self.isoDate), types: &types)
    }

    /// How long a temporary upload may stand before a walk takes it for a killed upload's.
    static let staleTemporaryAge: TimeInterval = 600

    /// Removes the temporary objects (`.folio-upload-…`) of uploads killed before their copy into
    /// place, once older than ``staleTemporaryAge``: a walk lists them, and no one else will.
    func removeStaleTemporaries(_ objects: [S3Object]) async {
        for object in objects where (object.key.split(separator: "/").last ?? "").hasPrefix(Self.temporaryPrefix) {
            guard let modified = object.lastModified.flatMap(Self.isoDate), Date().timeIntervalSince(modified) > Self.staleTemporaryAge else { continue }
            if (try? await deleteKey(object.key, condition: nil)) != nil {
                logger.notice("removed a temporary upload a killed transfer left behind", metadata: ["key": "\(object.key.prefix(300))"])
            }
        }
    }

    /// The folder item for `relative` (ending in `/`).
    func folder(_ relative: String) -> FileProviderItemRecord {
        record(relative, etag: nil, size: 0, modified: nil)
    }

    /// The item `relative` now, or noSuchItem.
    func current(_ relative: String) async throws -> FileProviderItemRecord {
        guard Self.isServable(relative) else { throw FileProviderError.noSuchItem(Self.identifier(relative)) }
        if relative.hasSuffix("/") {
            let page = try await s3.list(prefix: prefix + relative, maximumKeys: 1)
            guard !page.objects.isEmpty || !page.prefixes.isEmpty else { throw FileProviderError.noSuchItem(Self.identifier(relative)) }
            return folder(relative)
        }
        let reply = try await s3.send("HEAD", prefix + relative)
        guard reply.status == 200 else { throw S3Client.statusError(reply.status, reply.body, "HEAD", relative) }
        return record(
            relative, etag: reply.header("ETag"), size: reply.header("Content-Length").flatMap { Int64($0) } ?? 0,
            modified: reply.header("Last-Modified").flatMap(ETag.date))
    }

    /// The item `relative` now, or nil when there is none (other errors are thrown).
    func existing(_ relative: String) async throws -> FileProviderItemRecord? {
        do {
            return try await current(relative)
        } catch let error as FileProviderError where error.code == .noSuchItem {
            return nil
        }
    }

    func listChildren(of container: FileProviderItemIdentifier) async throws -> [FileProviderItemRecord] {
        let relative = Self.relative(container)
        guard relative.isEmpty || relative.hasSuffix("/") else { throw FileProviderError(.noSuchItem, message: "\(container) is not a folder") }
        let page = try await s3.listAll(prefix: prefix + relative, delimiter: "/")
        if !relative.isEmpty, page.objects.isEmpty, page.prefixes.isEmpty {
            throw FileProviderError(.noSuchItem, message: "\(container) is not a folder")
        }
        var types = FileNameTypes()
        let files = page.objects.filter { $0.key != prefix + relative }.compactMap { record($0, types: &types) }
        let folders = page.prefixes.compactMap { key -> FileProviderItemRecord? in
            let inner = String(key.dropFirst(prefix.count))
            guard key.hasPrefix(prefix), Self.isServable(inner) else { return nil }
            return folder(inner)
        }
        return files + folders
    }

    func walk() async throws -> ListingWalk {
        var found: [FileProviderItemIdentifier: FileProviderItemRecord] = [:]
        var types = FileNameTypes()
        let objects = try await s3.listAll(prefix: prefix).objects
        await removeStaleTemporaries(objects)
        for object in objects {
            guard let item = record(object, types: &types) else { continue }
            found[item.itemIdentifier] = item
            // A key implies the folders above it, marker or not.
            var parent = Self.parent(of: Self.relative(item.itemIdentifier))
            while !parent.isEmpty, found[Self.identifier(parent)] == nil {
                found[Self.identifier(parent)] = folder(parent)
                parent = Self.parent(of: parent)
            }
        }
        return ListingWalk(items: found)
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
        guard !relative.isEmpty, !relative.hasSuffix("/") else { throw FileProviderError(.noSuchItem, message: "\(identifier) is a folder") }
        let destination = request.fetchDestination()
        let received = try await withTaskCancellationHandler {
            try await s3.download(prefix + relative, to: destination, progress: progress, durable: request.flushesContents, arriving: request.arriving)
        } onCancel: {
            progress.cancel()
        }
        let item = record(relative, etag: received.etag, size: received.size, modified: Date())
        if let version, version.contentVersion != item.itemVersion.contentVersion {
            unlink(destination)
            throw FileProviderError(.versionNoLongerAvailable, message: "\(item.filename) changed since that version")
        }
        return (URL(fileURLWithPath: destination, isDirectory: false), item, received.sha256, received.written)
    }

    // MARK: Profile

    /// Whether the server honours `If-Match` on PUT (probed once with a key of the provider's own;
    /// calls made while the probe runs wait for it rather than each probing again).
    func conditionsHonoured() async throws -> Bool {
        if let profile { return profile.honoursConditions }
        let probe = probing ?? Task { try await self.probe() }
        probing = probe
        do {
            let found = try await probe.value
            profile = found
            return found.honoursConditions
        } catch {
            // A failed probe is tried again by the next call (unless another has begun since).
            if probing == probe { probing = nil }
            throw error
        }
    }

    private func probe() async throws -> Profile {
        let probe = prefix + Self.temporaryPrefix + "probe-" + UUID().uuidString
        let created = try await s3.send("PUT", probe, body: Array("probe".utf8))
        guard (200..<300).contains(created.status) else { throw S3Client.statusError(created.status, created.body, "PUT", probe) }
        let conditional = try await s3.send("PUT", probe, headers: [("If-Match", "\"folio-no-such-etag\"")], body: Array("probe 2".utf8))
        _ = try? await s3.send("DELETE", probe)
        let honoured = conditional.status == 412
        logger.info("server probed", metadata: ["endpoint": "\(s3.endpoint.absoluteString)", "bucket": "\(s3.bucket)", "honoursIfMatch": "\(honoured)"])
        return Profile(honoursConditions: honoured)
    }
}
