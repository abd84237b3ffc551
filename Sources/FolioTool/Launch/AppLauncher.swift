import ArgumentParser
import Folio
import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Starts a command as an app: `FOLIO_APP_ID` names it (the library declares it to the daemon),
/// `HOME` is its container (as on iOS, where an app's home is its container) and `TMPDIR` the
/// container's `tmp`; the XDG folders stay the user's, so the library finds the daemon. With
/// `sandbox`, bubblewrap confines it (see `SandboxArguments`).
struct AppLauncher {
    let app: String
    let paths: FolioPaths

    /// The environment the app runs with.
    func environment(container: AppContainer) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["FOLIO_APP_ID"] = app
        environment["FOLIO_CONTAINER"] = container.url.path
        environment["HOME"] = container.url.path
        environment["TMPDIR"] = container.temporaryURL.path
        environment["XDG_DATA_HOME"] = paths.dataHome
        environment["XDG_CONFIG_HOME"] = paths.configHome
        environment["XDG_STATE_HOME"] = paths.stateHome
        environment["XDG_RUNTIME_DIR"] = paths.runtimeDirectory
        return environment
    }

    /// Runs `command` as the app and returns its exit status (128 + the signal when it was killed).
    func run(_ command: [String], sandbox: Bool) throws -> Int32 {
        guard WireCheck.isValidApp(app), AppManifest.registered(app, in: paths.appsDirectory) != nil else {
            printError("folio: no app \(app) is registered (folio app register <manifest>)")
            throw ExitCode.failure
        }
        let container = AppContainer(appIdentifier: app, paths: paths)
        try container.create()
        var environment = environment(container: container)
        guard sandbox else { return try spawn(command, environment: environment, directory: container.url.path) }
        let sandboxed = try SandboxArguments(app: app, paths: paths, container: container).arguments(for: command, environment: &environment)
        // Not Foundation's `Process`, which closes every descriptor but the standard three: the
        // binds name descriptors bubblewrap must inherit.
        guard
            let child = SpawnedProcess(
                sandboxed.arguments, environment: environment, passing: sandboxed.descriptors.map { ($0.descriptor.rawValue, $0.descriptor.rawValue) },
                inheritingStandardStreams: true)
        else {
            printError("folio: cannot start \(sandboxed.arguments[0]): \(Errno(rawValue: errno))")
            throw ExitCode.failure
        }
        withExtendedLifetime(sandboxed.descriptors) {}
        return child.wait()
    }

    private func spawn(_ arguments: [String], environment: [String: String], directory: String) throws -> Int32 {
        let process = Process()
        guard let executable = ExecutableSearch.locate(arguments[0], path: environment["PATH"]) else {
            printError("folio: no command \(arguments[0])")
            throw ExitCode(127)
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try process.run()
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
}
