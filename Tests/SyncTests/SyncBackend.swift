import Folio
import FolioProviders
import FolioTesting
import Foundation

/// A server two devices sync through: in memory, or a real one on loopback with a provider per device.
final class SyncBackend: @unchecked Sendable {
    enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case memory, apache, wsgidav, lighttpd, rclone, moto
        var description: String { rawValue }
        var server: TestServer.Kind? {
            switch self {
            case .memory: nil
            case .apache: .apache
            case .wsgidav: .wsgidav
            case .lighttpd: .lighttpd
            case .rclone: .rclone
            case .moto: .moto
            }
        }
        /// Whether the test can run here (its server is installed, or CI, where a missing one fails).
        var runs: Bool { server.map(TestServer.shouldRun) ?? true }
    }

    let kind: Kind
    let server: TestServer?
    /// A proxy in front of the server that injects faults, when asked for.
    let proxy: FaultProxy?
    private let memory = InMemoryFileProvider(pageSize: 50)

    /// How long a request without content may take (long: whole-suite runs load the machine).
    let requestTimeout: Duration

    init(_ kind: Kind, proxied: Bool = false, requestTimeout: Duration = .seconds(30)) throws {
        self.kind = kind
        self.requestTimeout = requestTimeout
        server = try kind.server.map { try TestServer($0) }
        proxy = try proxied ? server.map { try FaultProxy(upstreamPort: $0.port) } : nil
    }

    /// Where devices reach the server.
    var url: URL { proxy?.baseURL ?? server!.baseURL }

    /// A provider for one device (its own connection state; the in-memory server is shared).
    func provider() throws -> any FileProvider {
        switch kind {
        case .memory: return memory
        case .apache, .wsgidav, .lighttpd, .rclone: return WebDAVProvider(baseURL: url, pageSize: 100, requestTimeout: requestTimeout)
        case .moto:
            let account = server!.s3!
            return S3Provider(
                endpoint: url, bucket: account.bucket, prefix: "drive", accessKey: account.accessKey, secretKey: account.secretKey,
                pageSize: 100, requestTimeout: requestTimeout)
        }
    }

    /// A new device on this server.
    func device(_ name: String, keepsEverything: Bool = true) async throws -> SyncDevice {
        try await SyncDevice(name, provider: provider(), keepsEverything: keepsEverything)
    }
}
