@testable import Folio
import FolioTesting
import Foundation
import Testing

/// A private Folio world with a running daemon whose index covers `docs`, and a connection to it
/// for queries (through `CoordinationEngine.override`) and index requests.
final class IndexWorld: @unchecked Sendable {
    let dir: TemporaryDirectory
    private(set) var environment: [String: String]
    let docs: URL
    private(set) var daemon: DaemonProcess
    private(set) var engine: DaemonCoordinationEngine
    private let arguments: [String]

    /// - Parameters:
    ///   - watch: whether the daemon's index watches the file system (off: only coordinated writes
    ///     and rescans reach it).
    ///   - stepDelay: a pause after each crawl step, in milliseconds.
    init(_ name: String, watch: Bool = true, stepDelay: Int = 0, arguments: [String] = [], populate: (TemporaryDirectory) throws -> Void = { _ in }) async throws {
        dir = try TemporaryDirectory(name)
        var environment = dir.xdgEnvironment()
        if !watch { environment["FOLIO_INDEX_WATCH"] = "off" }
        if stepDelay > 0 { environment["FOLIO_INDEX_STEP_DELAY"] = String(stepDelay) }
        self.environment = environment
        self.arguments = arguments
        docs = dir.child("docs")
        try FileManager.default.createDirectory(at: docs, withIntermediateDirectories: true)
        try populate(dir)
        daemon = try DaemonProcess(environment: environment, arguments: arguments)
        let socket = try daemon.waitForListening()
        engine = try DaemonCoordinationEngine(socketPath: socket, app: nil)
        _ = try send(IndexAdd(path: docs.path))
    }

    deinit {
        engine.disconnect()
        daemon.stop()
    }

    func send<Request: DaemonRequest>(_ request: Request) throws -> Request.Reply {
        try engine.send(request)
    }

    /// Waits (suspending) until the index has nothing left to crawl.
    func waitUntilIdle(_ seconds: Double = 180) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try send(IndexStatus())["state"]?.stringValue == "idle" { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("the index did not finish crawling in \(seconds) s: \(try send(IndexStatus()))")
    }

    /// Kills the daemon with SIGKILL (no shutdown at all); `disconnecting`: this world's connection
    /// is closed first (else it finds the daemon gone, as an app would).
    func kill(disconnecting: Bool = true) {
        if disconnecting { engine.disconnect() }
        Glibc.kill(daemon.process.processIdentifier, SIGKILL)
        daemon.process.waitUntilExit()
    }

    /// Starts a new daemon on the same data (after `kill()` or a stop), without a crawl delay.
    func restart() throws {
        environment["FOLIO_INDEX_STEP_DELAY"] = nil
        if daemon.process.isRunning {
            engine.disconnect()
            daemon.stop()
        }
        daemon = try DaemonProcess(environment: environment, arguments: arguments)
        engine = try DaemonCoordinationEngine(socketPath: try daemon.waitForListening(), app: nil)
    }

    /// A query over `docs` run by this daemon's index.
    func query(_ format: String, interval: TimeInterval = 0.05) throws -> MetadataQuery {
        let query = MetadataQuery()
        query.predicate = MetadataPredicate(format: format)
        query.searchScopes = [docs]
        query.notificationBatchingInterval = interval
        return query
    }

    /// Starts `query` on the daemon, and checks that the daemon (not this process) runs it.
    func start(_ query: MetadataQuery) throws {
        let before = try send(IndexStatus())["queries"]?.intValue ?? 0
        let started = CoordinationEngine.$override.withValue(engine) { query.start() }
        guard started else { throw TestFailure("the query did not start") }
        let after = try send(IndexStatus())["queries"]?.intValue ?? 0
        guard after == before + 1 else { throw TestFailure("the daemon does not run the query (it ran in process)") }
    }

    /// The index database's file.
    var indexDatabase: String { FolioPaths(environment: environment).indexDatabase }

    /// Runs `sql` on the index database (or `database`) with the sqlite3 tool; one line per row,
    /// columns split by tabs.
    func sql(_ sql: String, on database: String? = nil) throws -> [[String]] {
        let output = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), ["-separator", "\t", database ?? indexDatabase, sql])
        guard output.status == 0 else { throw TestFailure("sqlite3: \(output.stderr)") }
        return output.stdout.split(separator: "\n", omittingEmptySubsequences: true).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }
}
