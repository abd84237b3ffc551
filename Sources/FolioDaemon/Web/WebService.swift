import Folio
import FolioSync
import FolioSystem
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import SystemPackage

/// The document browser and picker page, served by the daemon on loopback (docs/web.md): a
/// Hummingbird application in the daemon's `ServiceGroup`, on the daemon's own services (the index,
/// recents, favorites, tags, the trash, coordination). Once listening it writes where it is and its
/// token to `$XDG_RUNTIME_DIR/folio/web.json` (0600), which `folio browse` reads; the file goes when
/// the daemon stops.
final class WebService: Service, Sendable {
    let state: WebState
    private let application: Application<RouterResponder<WebRequestContext>>
    private let logger: Logger

    init(
        context: DaemonContext, paths: FolioPaths, port: Int, home: String?,
        driveCheck: (@Sendable (DriveConfiguration, String?) async throws -> Void)?, logger: Logger
    ) {
        let scopeRoots = [home, paths.driveDirectory, paths.containersDirectory].compactMap { $0 }
        let state = WebState(context: context, paths: paths, scopeRoots: scopeRoots, home: home, driveCheck: driveCheck, logger: logger)
        self.state = state
        self.logger = logger
        let router = Router(context: WebRequestContext.self)
        router.add(middleware: WebGate(state: state))
        // An app's pick() with no page open opens one (a new tab through xdg-open) and waits for it.
        context.access.picker.setPageOpener { [state] in
            guard let port = state.port,
                WebLauncher.open("http://127.0.0.1:\(port)/?token=\(state.token)", in: paths.socketDirectory)
            else { return nil }
            return state.changes.picker
        }
        WebAssets.addRoutes(to: router, state: state)
        WebRoutes.addRoutes(to: router, state: state)
        application = Application(
            router: router,
            server: .http1(configuration: .init(additionalChannelHandlers: [RequestTargetGuard.Installer()])),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
            onServerRunning: { channel in
                guard let port = channel.localAddress?.port else { return }
                state.listening(on: port)
            },
            logger: Logger(label: "folio.web"))
    }

    func run() async throws {
        defer { state.stopped() }
        // Open event streams end first, or the server would wait for them to stop on their own.
        try await withGracefulShutdownHandler {
            try await application.run()
        } onGracefulShutdown: { [state] in
            state.changes.finish()
        }
    }
}

/// What the page's handlers share: the daemon's services, the scope, the token and the port.
final class WebState: Sendable {
    let context: DaemonContext
    let paths: FolioPaths
    /// The user's home folder (the first place in the sidebar).
    let home: String?
    let scopeRoots: [String]
    /// The secret in the first URL, then in the cookie; new each time the daemon starts.
    let token: String
    let logger: Logger
    let files: CoordinatedFiles
    let trash: FreedesktopTrash
    let changes: WebChanges
    /// Whose process is on the other end of a connection.
    let peers = LoopbackPeer()
    /// Checks a drive before the page saves it (nil: the page cannot set one up).
    let driveCheck: (@Sendable (DriveConfiguration, String?) async throws -> Void)?
    private let boundPort = Mutex<Int?>(nil)
    private let progressReporting = Mutex(false)
    /// The documents in conflict, as of the version store's manifests folder's modification time
    /// (a manifest is rewritten by rename, which changes it).
    private let conflictCache = Mutex<(stamp: Double, paths: Set<String>)?>(nil)

    init(
        context: DaemonContext, paths: FolioPaths, scopeRoots: [String], home: String?,
        driveCheck: (@Sendable (DriveConfiguration, String?) async throws -> Void)?, logger: Logger
    ) {
        self.context = context
        self.driveCheck = driveCheck
        self.paths = paths
        self.home = home
        self.scopeRoots = scopeRoots
        self.logger = logger
        token = Self.makeToken()
        files = CoordinatedFiles(engine: context.access.coordination)
        trash = FreedesktopTrash(directory: paths.dataHome + "/Trash", files: files)
        changes = WebChanges(index: context.index, picker: context.access.picker, logger: logger)
    }

    /// Where the documents with unresolved conflicts are: read again only when the version store
    /// changed. Blocking.
    func conflicts() -> Set<String> {
        let stamp = (try? FileStatus(path: FilePath(paths.versionsDirectory + "/items")))?.modificationTime ?? 0
        if let cached = conflictCache.withLock({ $0 }), cached.stamp == stamp { return cached.paths }
        let found = Set(VersionStore.current.documentsWithUnresolvedConflicts())
        conflictCache.withLock { $0 = (stamp, found) }
        return found
    }

    /// Makes the caller the one task pushing downloads' progress; false when one already is.
    func claimProgressReporter() -> Bool {
        progressReporting.withLock { busy in
            defer { busy = true }
            return !busy
        }
    }

    func releaseProgressReporter() { progressReporting.withLock { $0 = false } }

    /// The port, once listening.
    var port: Int? { boundPort.withLock { $0 } }

    /// What the page may reach now: the home folder, Folio's folders and every indexed root (read
    /// again each time: roots come and go).
    func scope() async -> WebScope {
        let roots = (try? await context.index.perform { try $0.roots().map(\.path) }) ?? []
        let (scopeRoots, paths, access) = (scopeRoots, paths, context.access)
        // realpath of each: blocking, so on a pool.
        return (try? await blocking(.quick) {
            WebScope(
                roots: scopeRoots + roots, closed: [paths.dataDirectory, paths.stateDirectory, paths.configDirectory, paths.socketDirectory],
                openings: [paths.driveDirectory, paths.containersDirectory], containers: paths.containersDirectory, writable: access.writableFolders())
        }) ?? WebScope(roots: [])
    }

    /// The server listens: remember the port and publish `web.json`.
    func listening(on port: Int) {
        boundPort.withLock { $0 = port }
        let description: WireValue = ["url": .string("http://127.0.0.1:\(port)/"), "port": .int(Int64(port)), "token": .string(token), "pid": .int(Int64(getpid()))]
        do {
            // The control socket's folder (0700) exists: the socket was bound before any service ran.
            try AtomicFile.write(Data(description.serialized()), to: webFile, permissions: [.ownerReadWrite])
            logger.info("the browser page is served", metadata: ["url": "http://127.0.0.1:\(port)/"])
        } catch {
            logger.error("cannot write \(webFile); `folio browse` will not find the page", metadata: ["error": "\(error)"])
        }
    }

    /// The server stopped: `web.json` goes (only if it is still ours).
    func stopped() {
        guard let data = FileManager.default.contents(atPath: webFile), let value = try? WireValue(parsing: Array(data)),
            value["token"]?.stringValue == token
        else { return }
        unlink(webFile)
    }

    var webFile: String { paths.socketDirectory + "/web.json" }

    /// The cookie's name: per port, so two users' daemons on one machine never share one.
    var cookieName: String { "folio-\(port ?? 0)" }

    private static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
