import Foundation

/// A private daemon (and an echo process for the raw socket baseline) under a scratch folder, for
/// the benchmarks that go through the daemon.
final class BenchmarkDaemon {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let environment: [String: String]
    let socket: String
    let echoSocket: String
    private let daemon: Child
    private let echo: Child

    init(root: String, environment extra: [String: String] = [:]) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        for (key, folder) in [("XDG_RUNTIME_DIR", "run"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")] {
            environment[key] = root + "/" + folder
        }
        environment["FOLIO_COORDINATION"] = "daemon"
        environment.merge(extra) { $1 }
        self.environment = environment
        socket = root + "/run/folio/folio.sock"
        echoSocket = root + "/echo.sock"
        daemon = try Child(executable, ["daemon", "--log-level", "error"], environment: environment)
        echo = try Child(executable, ["bench-worker", "echo", echoSocket], environment: environment)
        try CoordinationBenchmarks.waitForSocket(socket)
        try CoordinationBenchmarks.waitForSocket(echoSocket)
    }

    /// The daemon's process id.
    var daemonPID: Int32 { daemon.process.processIdentifier }

    /// The echo process's id.
    var echoPID: Int32 { echo.process.processIdentifier }

    func stop() {
        echo.stop()
        daemon.stop()
    }
}
