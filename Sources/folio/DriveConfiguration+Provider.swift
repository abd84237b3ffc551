import Folio
import FolioProviders
import FolioSync
import Foundation

extension DriveConfiguration {
    /// The provider the drive lives on, with the sealed secret. Made here, where the providers are
    /// linked: the daemon and the sync engine know providers only by their protocol.
    func makeProvider(_ paths: FolioPaths = FolioPaths()) throws -> any FileProvider {
        try makeProvider(secret: try SecretBox.load(at: Self.secretPath(paths), paths: paths), paths)
    }

    /// The provider with `secret` given (a configuration not saved yet, being checked).
    func makeProvider(secret: String?, _ paths: FolioPaths = FolioPaths()) throws -> any FileProvider {
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
                temporaryDirectory: URL(fileURLWithPath: paths.driveDirectory + "/.folio-staging/provider"), environment: secret.map { ProcessInfo.processInfo.environment.merging(["FOLIO_PASSWORD": $0]) { $1 } })
        }
    }
}

extension DriveConfiguration {
    /// Checks that the drive can be reached before it is saved: the provider is made with `secret`
    /// and lists its root (the server answers, the account and bucket are right, the folder or
    /// executable works).
    func check(secret: String?, _ paths: FolioPaths = FolioPaths()) async throws {
        let provider = try makeProvider(secret: secret, paths)
        let staging = URL(fileURLWithPath: paths.driveDirectory + "/.folio-staging")
        // A provider program writes fetched contents there (its own folder below): it must exist.
        try FileManager.default.createDirectory(at: staging.appendingPathComponent("provider"), withIntermediateDirectories: true)
        defer { (provider as? ProviderProcess)?.stop() }
        _ = try await provider.enumerateItems(
            in: .rootContainer, startingAt: .initialPageSortedByName, request: FileProviderRequest(temporaryDirectory: staging))
    }
}
