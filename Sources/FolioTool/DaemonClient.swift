import ArgumentParser
import Folio

/// Runs `body` with a connection to the user's daemon, or fails the command with a clear message
/// when none answers.
func withDaemon<T>(_ command: String, _ body: (DaemonCoordinationEngine) throws -> T) throws -> T {
    let socket = FolioPaths().socketPath
    let engine: DaemonCoordinationEngine
    do {
        engine = try DaemonCoordinationEngine(socketPath: socket)
    } catch {
        printError("folio \(command): no Folio daemon answers on \(socket) (start one with `folio daemon`): \(error)")
        throw ExitCode.failure
    }
    defer { engine.disconnect() }
    do {
        return try body(engine)
    } catch let failure as CoordinationFailure {
        printError("folio \(command): \(failure.message)")
        throw ExitCode.failure
    }
}
