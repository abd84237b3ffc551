import Folio
import FolioProviders
import FolioSync
import Foundation

extension DriveConfiguration {
    /// The provider the drive lives on, with the sealed secret. Made here, where the providers are
    /// linked: the daemon and the sync engine know providers only by their protocol.
    /// `replicaRoot` is where the replica is reached when not at the drive's folder (beneath its
    /// mount): a provider program writes there.
    func makeProvider(_ paths: FolioPaths = FolioPaths(), replicaRoot: String? = nil) throws -> any FileProvider {
        try makeProvider(secret: try SecretBox.load(at: Self.secretPath(paths), paths: paths), paths, replicaRoot: replicaRoot)
    }

    /// The provider with `secret` given (a configuration not saved yet, being checked).
    func makeProvider(secret: String?, _ paths: FolioPaths = FolioPaths(), replicaRoot: String? = nil) throws -> any FileProvider {
        switch kind {
        case .webdav:
            guard let base = URL(string: url), base.scheme == "http" || base.scheme == "https" else {
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "the drive's WebDAV URL “\(url)” is not http(s)"])
            }
            return WebDAVProvider(baseURL: base, user: user, password: secret)
        case .s3:
            guard let endpoint = URL(string: url), endpoint.host != nil, let bucket, let user, let secret else {
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "the drive's S3 configuration lacks a server, bucket, access key or secret"])
            }
            return S3Provider(endpoint: endpoint, bucket: bucket, prefix: prefix ?? "", accessKey: user, secretKey: secret, region: region ?? "us-east-1")
        case .folder:
            return try LocalFolderProvider(root: url)
        case .provider:
            // Fetched contents land beside the replica (same file system: they are placed by rename).
            return ProviderProcess(
                executable: URL(fileURLWithPath: url), arguments: arguments ?? [],
                domain: FileProviderDomain(identifier: FileProviderDomainIdentifier(rawValue: "drive"), displayName: "Drive"),
                temporaryDirectory: URL(fileURLWithPath: (replicaRoot ?? paths.driveDirectory) + "/.folio-staging/provider"), environment: secret.map { ProcessInfo.processInfo.environment.merging(["FOLIO_PASSWORD": $0]) { $1 } })
        }
    }
}

extension DriveConfiguration {
    /// Why a drive cannot be set up, in one sentence.
    struct CheckRefusal: LocalizedError, CustomStringConvertible {
        var sentence: String
        var errorDescription: String? { sentence }
        var description: String { sentence }
    }

    /// Checks the drive before it is saved: the provider is made with `secret`, lists its root (the
    /// server answers, speaks the protocol, the account, bucket, collection or folder are right),
    /// and writes and deletes a small file in the drive's own folder `.folio` (the account may write). A refusal is one
    /// sentence (`CheckRefusal`) that says which, with the server's words after it.
    func check(secret: String?, _ paths: FolioPaths = FolioPaths()) async throws {
        let provider = try makeProvider(secret: secret, paths)
        let staging = URL(fileURLWithPath: paths.driveDirectory + "/.folio-staging")
        // A provider program writes fetched contents there (its own folder below): it must exist.
        // (The page's setup runs this in the daemon: files are touched on the blocking pool.)
        let stagingFolder = kind == .provider ? staging.appendingPathComponent("provider") : staging
        try await SyncFileWork.run { try FileManager.default.createDirectory(at: stagingFolder, withIntermediateDirectories: true) }
        defer { (provider as? ProviderProcess)?.stop() }
        let request = FileProviderRequest(temporaryDirectory: staging)
        do {
            _ = try await provider.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: request)
        } catch {
            throw CheckRefusal(sentence: refusal(error, listing: true))
        }
        // The write probe: a small file of Folio's own, deleted at once.
        let probe = staging.appendingPathComponent("setup-check-\(UUID().uuidString)")
        try await SyncFileWork.run { try Data("Folio checks that it may write here.\n".utf8).write(to: probe) }
        let written: Result<Void, any Error>
        do {
            // In the drive's own folder, which sync never shows: a probe that could not be deleted
            // reaches no device.
            let meta = FileProviderItemRecord(
                itemIdentifier: FileProviderItemIdentifier("new-setup-meta"), parentItemIdentifier: .rootContainer, filename: ".folio", contentType: .folder)
            guard let folder = try await provider.createItem(basedOn: meta, fields: [.filename, .parentItemIdentifier], contents: nil, options: [.mayAlreadyExist], request: request).item else {
                throw FileProviderError(.cannotSynchronize, message: "the provider made no folder .folio")
            }
            let template = FileProviderItemRecord(
                itemIdentifier: FileProviderItemIdentifier("new-setup-check"), parentItemIdentifier: folder.itemIdentifier,
                filename: "setup-check-\(UUID().uuidString.lowercased())")
            let created = try await provider.createItem(basedOn: template, fields: [.filename, .parentItemIdentifier, .contents], contents: probe, options: [], request: request)
            if let item = created.item {
                try await provider.deleteItem(identifier: item.itemIdentifier, baseVersion: FileProviderItemVersion(), options: [], request: request)
            }
            written = .success(())
        } catch {
            written = .failure(error)
        }
        try? await SyncFileWork.run { try FileManager.default.removeItem(at: probe) }
        if case .failure(let error) = written { throw CheckRefusal(sentence: refusal(error, listing: false)) }
    }

    /// The sentence for what the check ran into.
    private func refusal(_ error: any Error, listing: Bool) -> String {
        let place: String =
            switch kind {
            case .webdav: url
            case .s3: "\(url), bucket \(bucket ?? "")\(prefix.map { "/" + $0 } ?? "")"
            case .folder: url
            case .provider: url
            }
        guard let error = error as? FileProviderError else {
            return listing ? "\(place) cannot be read: \(error.localizedDescription)" : "Folio may not write to \(place): \(error.localizedDescription)"
        }
        let words = error.message ?? "\(error.code)"
        switch error.code {
        case .noSuchItem where listing && kind == .webdav: return "there is no WebDAV collection at \(url) (\(words))"
        case .noSuchItem where listing: return "\(place) does not exist (\(words))"
        case .serverUnreachable: return "the server could not be reached (\(words))"
        case .notAuthenticated where kind == .webdav && (user == nil || user?.isEmpty == true):
            return "the server wants a user name and password (--user, and the password in $FOLIO_PASSWORD): \(words)"
        case _ where listing: return words
        default: return "Folio may not write to \(place): \(words)"
        }
    }
}
