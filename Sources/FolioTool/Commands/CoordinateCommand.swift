import ArgumentParser
import Folio
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio coordinate read|write|delete|move <paths> -- <command>`: runs a command inside a
/// coordinated claim, so shell scripts and programs in any language take part in file coordination.
struct CoordinateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coordinate",
        abstract: "Run a command inside a coordinated read, write, delete or move of files.",
        discussion: """
            Presenters of the files are asked to save (read) or relinquish them first, and hear what \
            changed afterwards. The command runs in a process group of its own that never outlives \
            the claim: SIGTERM, SIGINT, SIGHUP and SIGQUIT are passed on to it, and if folio is \
            killed, the group is killed with it. `move SRC DST` reports the move to presenters when the command \
            succeeded and SRC is gone. The exit status is the command's; 75 when the coordination \
            itself failed.

              folio coordinate read notes.txt -- cp notes.txt /backup/
              folio coordinate write notes.txt -- sh -c 'date >> notes.txt'
              folio coordinate move a.txt b.txt -- mv a.txt b.txt
            """
    )

    enum Access: String, ExpressibleByArgument, CaseIterable {
        case read, write, delete, move
    }

    @Argument(help: "read, write, delete or move.")
    var access: Access

    @Flag(name: .customLong("without-changes"), help: "(read) Do not ask presenters to save first.")
    var withoutChanges = false

    @Argument(
        parsing: .captureForPassthrough,
        help: "The files (for move: source and destination), then --, then the command to run while the claim is held.")
    var arguments: [String] = []

    /// What stands before `--`: the files, and the options written after the access (the
    /// passthrough capture takes `read --without-changes f` whole).
    private var leading: [String] { Array(arguments.prefix { $0 != "--" }) }
    /// The files: everything before `--` but the options.
    var paths: [String] { leading.filter { !$0.hasPrefix("--") } }
    /// Whether the read asks presenters not to save first, however the flag was placed.
    var readsWithoutChanges: Bool { withoutChanges || leading.contains("--without-changes") }
    /// The command: everything after the first `--`.
    var command: [String] {
        guard let separator = arguments.firstIndex(of: "--") else { return [] }
        return Array(arguments[(separator + 1)...])
    }

    func validate() throws {
        if let unknown = leading.first(where: { $0.hasPrefix("--") && $0 != "--without-changes" }) {
            throw ValidationError("unknown option \(unknown) (for a file of that name, write ./\(unknown))")
        }
        guard !paths.isEmpty else { throw ValidationError("name at least one file") }
        guard !command.isEmpty else { throw ValidationError("give the command after --") }
        if access == .move && paths.count != 2 { throw ValidationError("move takes a source and a destination") }
    }

    func run() async throws {
        warnWithoutDaemon()
        let urls = paths.map { URL(fileURLWithPath: $0) }
        let intents: [FileAccessIntent]
        switch access {
        case .read: intents = urls.map { .readingIntent(with: $0, options: readsWithoutChanges ? .withoutChanges : []) }
        case .write: intents = urls.map { .writingIntent(with: $0) }
        case .delete: intents = urls.map { .writingIntent(with: $0, options: .forDeleting) }
        case .move: intents = [.writingIntent(with: urls[0], options: .forMoving), .writingIntent(with: urls[1], options: .forReplacing)]
        }
        let coordinator = FileCoordinator()
        let status: Int32
        do {
            status = try await coordinator.coordinate(with: intents) {
                let status = await runCommand()
                if access == .move, status == 0 {
                    let source = intents[0].url, destination = intents[1].url
                    if !FileManager.default.fileExists(atPath: source.path) && FileManager.default.fileExists(atPath: destination.path) {
                        coordinator.item(at: source, didMoveTo: destination)
                    }
                }
                return status
            }
        } catch {
            printError("folio coordinate: \(error.localizedDescription)")
            throw ExitCode(75)
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs the command in a process group of its own that cannot outlive this process: killed
    /// with it (even by SIGKILL), sent the signals it receives, and ended, with whatever it left
    /// running, when the command ends (`SupervisedCommand`). So nothing it started writes after
    /// the claim ended.
    private func runCommand() async -> Int32 {
        do {
            // A command that cannot be found is reported by env(1), with status 127.
            return try await SupervisedCommand.run(command, environment: ProcessInfo.processInfo.environment)
        } catch {
            printError("folio coordinate: cannot run \(command[0]): \(error)")
            return 127
        }
    }
}

/// Says so on stderr when no daemon runs: coordination then reaches only this process.
func warnWithoutDaemon() {
    guard !(CoordinationEngine.current is DaemonCoordinationEngine),
        ProcessInfo.processInfo.environment["FOLIO_COORDINATION"] != "local"
    else { return }
    printError("folio: no Folio daemon is running; coordinating within this process only (start one with `folio daemon`)")
}
