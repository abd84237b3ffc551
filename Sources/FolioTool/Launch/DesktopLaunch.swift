import ArgumentParser
import Folio
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Starts a desktop application on a document as `gio open` does: its `Exec` line with the field
/// codes expanded; a terminal application in this terminal (waited for), any other in a session
/// of its own (not waited for: it outlives the command).
enum DesktopLaunch {
    static func open(_ path: String, in entry: DesktopEntry, noLaunch: Bool) throws {
        guard let command = entry.command(opening: [path]) else {
            printError("folio open: \(entry.id) runs \(entry.exec.first ?? "?"), which is not installed")
            throw ExitCode.failure
        }
        if noLaunch {
            print(command.joined(separator: " "))
            return
        }
        if entry.terminal {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            try process.run()
            // The person's session in the application (an editor, a pager): it takes as long as
            // they use it, on this command's own main thread.
            process.waitUntilExit()
            if process.terminationStatus != 0 { throw ExitCode(process.terminationStatus) }
            return
        }
        // Its output to /dev/null: it would otherwise end up wherever `folio open` writes (a
        // pipe, the daemon's log).
        guard SpawnedProcess(command, newSession: true) != nil else {
            printError("folio open: \(command[0]) could not be started")
            throw ExitCode.failure
        }
        print("opened \(path) in \(entry.name)")
    }
}
