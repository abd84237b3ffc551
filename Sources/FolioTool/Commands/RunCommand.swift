import ArgumentParser
import Folio
import Foundation

/// `folio run --app ID [--sandbox] -- command…`: starts a command as a registered app.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a command as an app: its container as home, its grants as its reach (confined by bubblewrap with --sandbox).")

    @Option(help: "The app's identifier.") var app: String
    @Flag(help: "Confine the command with bubblewrap: its container, the system's read-only folders and its granted documents are all it can reach.")
    var sandbox = false
    @Argument(parsing: .captureForPassthrough, help: "The command and its arguments (after --).") var command: [String] = []

    func run() throws {
        let command = command.first == "--" ? Array(command.dropFirst()) : command
        guard !command.isEmpty else { throw ValidationError("give the command to run after --") }
        let status = try AppLauncher(app: app, paths: FolioPaths()).run(command, sandbox: sandbox)
        if status != 0 { throw ExitCode(status) }
    }
}
