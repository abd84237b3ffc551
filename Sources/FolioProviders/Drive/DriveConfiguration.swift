public import Folio
import FolioSystem
public import Foundation

/// The user's drive: which provider holds it (`$XDG_CONFIG_HOME/folio/drive.json`). The secret (a
/// WebDAV password, an S3 secret key) is not in it: it is sealed in `drive.secret` beside it
/// (``SecretBox``), and a configuration's description never shows it.
public struct DriveConfiguration: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of servers a drive can live on.
    public enum Kind: String, Codable, Sendable {
        case webdav, s3, folder
        /// An out-of-process provider: an executable speaking the provider protocol over stdio.
        case provider
    }

    /// The file format.
    public var format = 1
    public var kind: Kind
    /// WebDAV: the collection's URL. S3: the server (scheme, host, port).
    public var url: String
    /// WebDAV: the user. S3: the access key id.
    public var user: String?
    /// S3: the bucket and the key prefix the drive lives under.
    public var bucket: String?
    public var prefix: String?
    /// S3: the region.
    public var region: String?
    /// Provider: the executable's arguments (`url` is the executable).
    public var arguments: [String]?

    /// A configuration.
    public init(
        kind: Kind, url: String, user: String? = nil, bucket: String? = nil, prefix: String? = nil, region: String? = nil, arguments: [String]? = nil
    ) {
        self.arguments = arguments
        self.kind = kind
        self.url = url
        self.user = user
        self.bucket = bucket
        self.prefix = prefix
        self.region = region
    }

    public var description: String {
        switch kind {
        case .webdav: "WebDAV \(url)" + (user.map { " as \($0)" } ?? "")
        case .s3: "S3 \(url) bucket \(bucket ?? "?")" + (prefix.map { "/\($0)" } ?? "") + (user.map { " with key \($0)" } ?? "")
        case .folder: "folder \(url)"
        case .provider: "provider \(([url] + (arguments ?? [])).joined(separator: " "))"
        }
    }

    /// Where the secret is sealed.
    public static func secretPath(_ paths: FolioPaths = FolioPaths()) -> String { paths.configDirectory + "/drive.secret" }

    /// The configured drive, or nil when there is none.
    /// - Throws: when the file is damaged.
    public static func load(_ paths: FolioPaths = FolioPaths()) throws -> DriveConfiguration? {
        guard let data = FileManager.default.contents(atPath: paths.driveConfiguration) else { return nil }
        do {
            return try JSONDecoder().decode(DriveConfiguration.self, from: data)
        } catch {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: paths.driveConfiguration, NSLocalizedDescriptionKey: "the drive configuration is damaged: \(error)"])
        }
    }

    /// Saves the configuration, and the secret sealed beside it (removed when nil).
    public func save(secret: String?, _ paths: FolioPaths = FolioPaths()) throws {
        try FileManager.default.createDirectory(atPath: paths.configDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let secret {
            try SecretBox.store(secret, at: Self.secretPath(paths), keyPath: SecretBox.keyPath(paths))
        } else {
            try? FileManager.default.removeItem(atPath: Self.secretPath(paths))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(try encoder.encode(self), to: paths.driveConfiguration)
    }

    /// The provider the drive lives on, with the sealed secret.
    public func makeProvider(_ paths: FolioPaths = FolioPaths()) throws -> any FileProvider {
        let secret = try SecretBox.load(at: Self.secretPath(paths), keyPath: SecretBox.keyPath(paths))
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
