package import Folio
import FolioSystem
import Foundation

/// The user's drive: which provider holds it (`$XDG_CONFIG_HOME/folio/drive.json`). The secret (a
/// WebDAV password, an S3 secret key) is not in it: it is sealed in `drive.secret` beside it
/// (``SecretBox``), and a configuration's description never shows it. The `folio` command makes
/// the provider it names (this module knows providers only by their protocol).
package struct DriveConfiguration: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of servers a drive can live on.
    package enum Kind: String, Codable, Sendable {
        /// A WebDAV collection.
        case webdav
        /// An S3 bucket (and a key prefix in it).
        case s3
        /// A folder of this machine (the local folder provider).
        case folder
        /// An out-of-process provider: an executable speaking the provider protocol over stdio.
        case provider
    }

    /// How the drive's files that are not downloaded appear to programs.
    package enum Files: String, Codable, Sendable, CaseIterable {
        /// As `name.folio-cloud` stubs in a plain folder; Folio's apps see the documents.
        case stubs
        /// Under their own names, in the drive's folder mounted with FUSE by the daemon; a
        /// program's first read downloads the file (``DriveMount``).
        case onDemand = "on-demand"
    }

    /// The file format.
    package var format = 1
    /// How files that are not downloaded appear (nil, in older configurations: stubs).
    package var files: Files?
    /// The kind of server.
    package var kind: Kind
    /// WebDAV: the collection's URL. S3: the server (scheme, host, port).
    package var url: String
    /// WebDAV: the user. S3: the access key id.
    package var user: String?
    /// S3: the bucket.
    package var bucket: String?
    /// S3: the key prefix the drive lives under (nil: the whole bucket).
    package var prefix: String?
    /// S3: the region.
    package var region: String?
    /// Provider: the executable's arguments (`url` is the executable).
    package var arguments: [String]?

    /// A configuration.
    package init(
        kind: Kind, url: String, user: String? = nil, bucket: String? = nil, prefix: String? = nil, region: String? = nil, arguments: [String]? = nil,
        files: Files? = nil
    ) {
        self.files = files
        self.arguments = arguments
        self.kind = kind
        self.url = url
        self.user = user
        self.bucket = bucket
        self.prefix = prefix
        self.region = region
    }

    /// `url` without the user and password it may carry (`https://alice:pass@host/`), and them.
    package static func splittingCredentials(from url: String) -> (url: String, user: String?, password: String?) {
        guard var components = URLComponents(string: url), components.user != nil || components.password != nil else { return (url, nil, nil) }
        let user = components.user, password = components.password
        components.user = nil
        components.password = nil
        return (components.string ?? url, user, password)
    }

    /// The configuration for people: the kind and location, never the secret (nor a password an
    /// older configuration kept in its URL).
    package var description: String {
        let url = Self.splittingCredentials(from: url).url
        return switch kind {
        case .webdav: "WebDAV \(url)" + (user.map { " as \($0)" } ?? "")
        case .s3: "S3 \(url) bucket \(bucket ?? "?")" + (prefix.map { "/\($0)" } ?? "") + (user.map { " with key \($0)" } ?? "")
        case .folder: "folder \(url)"
        case .provider: "provider \(([url] + (arguments ?? [])).joined(separator: " "))"
        }
    }

    /// Where the secret is sealed.
    package static func secretPath(_ paths: FolioPaths = FolioPaths()) -> String { paths.configDirectory + "/drive.secret" }

    /// The configured drive, or nil when there is none.
    /// - Throws: when the file is damaged.
    package static func load(_ paths: FolioPaths = FolioPaths()) throws -> DriveConfiguration? {
        guard let data = FileManager.default.contents(atPath: paths.driveConfiguration) else { return nil }
        do {
            return try JSONDecoder().decode(DriveConfiguration.self, from: data)
        } catch {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: paths.driveConfiguration, NSLocalizedDescriptionKey: "the drive configuration is damaged: \(error)"])
        }
    }

    /// Saves the configuration, and the secret sealed beside it (removed when nil).
    package func save(secret: String?, _ paths: FolioPaths = FolioPaths()) throws {
        try FolioPaths.makePrivateDirectory(paths.configDirectory)
        if let secret {
            try SecretBox.store(secret, at: Self.secretPath(paths), paths: paths)
        } else {
            try? FileManager.default.removeItem(atPath: Self.secretPath(paths))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(try encoder.encode(self), to: paths.driveConfiguration)
    }
}
