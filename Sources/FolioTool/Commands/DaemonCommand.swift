import ArgumentParser
import Folio
import FolioDaemon
import FolioSync
import Logging
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio daemon`: runs the per-user daemon in the foreground.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the per-user Folio daemon in the foreground (SIGTERM or Ctrl-C stops it)."
    )

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    @Option(help: "Seconds a file presenter may take to answer before the coordination waiting for it fails (default: $FOLIO_PRESENTER_TIMEOUT or 30).")
    var presenterTimeout: Double?

    @Option(help: "Port for the browser page on 127.0.0.1 (0: any free port, the default; `off`: no page). `folio browse` opens it.")
    var webPort: String?

    @Flag(help: "Start the daemon in the background and return once it listens; its log goes to $XDG_STATE_HOME/folio/daemon.log.")
    var background = false

    @Flag(help: "Stop the running daemon (SIGTERM) and wait until it has stopped.")
    var stop = false

    func run() async throws {
        if stop { return try DaemonControl.stop() }
        if background {
            var arguments = ["--log-level", logLevel]
            if let presenterTimeout { arguments += ["--presenter-timeout", "\(presenterTimeout)"] }
            if let webPort { arguments += ["--web-port", webPort] }
            return try DaemonControl.startInBackground(arguments)
        }
        var logger = Logger(label: "folio.daemon")
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level \(logLevel)")
        }
        logger.logLevel = level
        var configuration = DaemonConfiguration()
        configuration.driveProvider = { try DriveConfiguration.load()?.makeProvider(replicaRoot: $0) }
        configuration.driveCheck = { drive, secret in try await drive.check(secret: secret) }
        configuration.presenterTimeout = CoordinationArbiter.Configuration.fromEnvironment().presenterTimeout
        if let presenterTimeout {
            guard presenterTimeout > 0, presenterTimeout.isFinite else { throw ValidationError("--presenter-timeout must be positive") }
            configuration.presenterTimeout = .milliseconds(Int64(presenterTimeout * 1000))
        }
        if let webPort {
            if webPort == "off" {
                configuration.webPort = nil
            } else {
                guard let port = Int(webPort), (0...65535).contains(port) else { throw ValidationError("--web-port takes a port number or off") }
                configuration.webPort = port
            }
        }
        let daemon: Daemon
        do {
            daemon = try await buildDaemon(configuration: configuration, logger: logger)
        } catch {
            printError("folio daemon: \(error)")
            throw ExitCode.failure
        }
        print("folio daemon listening on unix:\(daemon.socketPath)")
        print("  index database: \(daemon.databasePath)")
        print("  data: \(configuration.paths.dataDirectory)")
        fflush(stdout)  // whoever started us waits for these lines, often through a pipe
        try await daemon.run()
        print("folio daemon stopped")
        fflush(stdout)
    }
}
