@testable import Folio
import FolioTesting
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Where a scenario's participants live.
enum Mode: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// One process, the in-process engine.
    case local
    /// One process, each participant with its own connection to a real daemon process.
    case daemon
    /// Each participant a separate helper process connected to a real daemon process.
    case processes

    var testDescription: String { rawValue }
}

/// One side of a scenario: a coordination driver in this process, or a helper process. Commands go
/// in; events are collected and waited for.
final class Participant: @unchecked Sendable {
    private let condition = NSCondition()
    private var log: [WireValue] = []
    private var driver: CoordinationDriver?
    private var process: Process?
    private var input: FileHandle?
    let engine: CoordinationEngine?

    /// A participant in this process on `engine`.
    init(engine: CoordinationEngine) {
        self.engine = engine
        driver = nil
        driver = CoordinationDriver(engine: engine) { [weak self] event in self?.record(event) }
    }

    /// A helper process connected to the daemon of `environment`.
    init(helperEnvironment environment: [String: String]) throws {
        engine = nil
        let process = Process()
        process.executableURL = ProcessRunner.builtExecutable("FolioCoordinationHelper")
        var env = environment
        env["FOLIO_COORDINATION"] = "daemon"
        process.environment = env
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        input = stdin.fileHandleForWriting
        let reader = stdout.fileHandleForReading
        Thread.detachNewThread { [weak self] in
            var buffer = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = buffer[buffer.startIndex..<newline]
                    buffer.removeSubrange(buffer.startIndex...newline)
                    if let event = try? WireValue(parsing: Array(line)) { self?.record(event) }
                }
            }
            self?.record(["event": "exit"])
        }
        _ = try waitFor("ready")
    }

    private func record(_ event: WireValue) {
        condition.lock()
        log.append(event)
        condition.broadcast()
        condition.unlock()
    }

    /// Sends one command.
    func send(_ command: WireValue) {
        if let driver {
            driver.run(command)
        } else if let input {
            var bytes = command.serialized()
            bytes.append(0x0A)
            try? input.write(contentsOf: Data(bytes))
        }
    }

    /// Every event so far.
    var events: [WireValue] {
        condition.lock()
        defer { condition.unlock() }
        return log
    }

    /// The first event named `name` (with `id` or presenter `callback` when given) — waiting up to
    /// `timeout` seconds for it.
    func waitFor(
        _ name: String, id: String? = nil, callback: String? = nil, presenter: String? = nil, path: String? = nil,
        timeout: Double = 10
    ) throws -> WireValue {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = log.first(where: {
                Self.matches($0, name, id, callback, presenter) && (path == nil || $0["path"]?.stringValue == path)
            }) {
                return found
            }
            guard condition.wait(until: deadline) else {
                throw TestFailure(
                    "no \(name) \(id ?? callback ?? "") event within \(timeout) s; events: \(log.map { String(decoding: $0.serialized(), as: UTF8.self) })")
            }
        }
    }

    /// Whether such an event arrives within `seconds`.
    func sees(_ name: String, id: String? = nil, callback: String? = nil, presenter: String? = nil, within seconds: Double) -> Bool {
        (try? waitFor(name, id: id, callback: callback, presenter: presenter, timeout: seconds)) != nil
    }

    /// The presenter callbacks seen so far for `presenter`, in order.
    func callbacks(of presenter: String) -> [String] {
        events.filter { $0["event"]?.stringValue == "presenter" && $0["name"]?.stringValue == presenter }
            .compactMap { $0["callback"]?.stringValue }
    }

    private static func matches(_ event: WireValue, _ name: String, _ id: String?, _ callback: String?, _ presenter: String?) -> Bool {
        guard event["event"]?.stringValue == name else { return false }
        if let id, event["id"]?.stringValue != id { return false }
        if let callback, event["callback"]?.stringValue != callback { return false }
        if let presenter, event["name"]?.stringValue != presenter { return false }
        return true
    }

    /// Kills the helper process with SIGKILL.
    func kill9() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func close() {
        (engine as? DaemonCoordinationEngine)?.disconnect()
        if let process, process.isRunning {
            send(["op": "exit"])
            try? input?.close()
            let deadline = Date().addingTimeInterval(2)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }
}

/// A scenario's world: a temporary folder, and (for the daemon modes) a daemon process.
final class Scenario: @unchecked Sendable {
    let mode: Mode
    let directory: TemporaryDirectory
    private var daemon: DaemonProcess?
    private var socketPath: String?
    private var participants: [Participant] = []
    private let localEngine: LocalCoordinationEngine?

    init(_ mode: Mode, presenterTimeout: Double? = nil) throws {
        self.mode = mode
        directory = try TemporaryDirectory("coordination")
        if mode == .local {
            var configuration = CoordinationArbiter.Configuration()
            if let presenterTimeout { configuration.presenterTimeout = .milliseconds(Int64(presenterTimeout * 1000)) }
            localEngine = LocalCoordinationEngine(configuration: configuration)
        } else {
            localEngine = nil
            let arguments = presenterTimeout.map { ["--presenter-timeout", String($0)] } ?? []
            let daemon = try DaemonProcess(environment: directory.xdgEnvironment(), arguments: arguments)
            socketPath = try daemon.waitForListening()
            self.daemon = daemon
        }
    }

    /// Stops the daemon and starts a new one on the same socket (a restart by the service manager).
    func restartDaemon() throws {
        daemon?.stop()
        let daemon = try DaemonProcess(environment: directory.xdgEnvironment())
        socketPath = try daemon.waitForListening()
        self.daemon = daemon
    }

    /// A path in the scenario's folder.
    func path(_ relative: String) -> String { directory.path + "/" + relative }

    /// Creates a file (and its folders) with `text`.
    func file(_ relative: String, _ text: String = "original\n") throws -> String {
        let full = path(relative)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
        return full
    }

    /// Creates a folder.
    func folder(_ relative: String) throws -> String {
        let full = path(relative)
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }

    /// A new participant of this scenario's mode.
    func participant() throws -> Participant {
        let made: Participant
        switch mode {
        case .local: made = Participant(engine: localEngine!)
        case .daemon: made = Participant(engine: try DaemonCoordinationEngine(socketPath: socketPath!))
        case .processes: made = try Participant(helperEnvironment: directory.xdgEnvironment())
        }
        participants.append(made)
        return made
    }

    /// The environment a process needs to reach this scenario's daemon.
    var environment: [String: String] { directory.xdgEnvironment() }

    /// The daemon's log (its stderr).
    var daemonLog: String { daemon?.log ?? "" }

    /// Whether the daemon's log comes to hold `text` within `seconds`.
    func daemonLogs(_ text: String, within seconds: Double = 10) -> Bool { daemon?.logs(text, within: seconds) ?? false }

    /// The arbiter's claims as `folio status` tells them: the in-process arbiter's, or the daemon's
    /// (asked over a connection of its own).
    func claims() throws -> [WireValue] {
        if let localEngine { return localEngine.arbiter.status()["claims"]?.arrayValue ?? [] }
        let engine = try DaemonCoordinationEngine(socketPath: socketPath!, app: nil)
        defer { engine.disconnect() }
        return try engine.send(DaemonStatus())["claims"]?.arrayValue ?? []
    }

    /// Waits until the arbiter holds a claim on `path` in `phase` — `waiting` behind another claim,
    /// or `messaging` presenters first: a coordination that is under way and not let in. An
    /// expectation that it has not entered then speaks of a coordination that really waits.
    @discardableResult
    func waitForClaim(on path: String, in phase: String = "waiting", timeout: Double = 10) throws -> WireValue {
        let deadline = Date().addingTimeInterval(timeout)
        var claims: [WireValue] = []
        while true {
            claims = try self.claims()
            if let found = claims.first(where: { claim in
                claim["state"]?.stringValue == phase && (claim["items"]?.arrayValue ?? []).contains { $0["path"]?.stringValue == path }
            }) {
                return found
            }
            guard Date() < deadline else { break }
            usleep(10_000)
        }
        throw TestFailure("no claim on \(path) is \(phase) within \(timeout) s; claims: \(claims.map { String(decoding: $0.serialized(), as: UTF8.self) })")
    }

    /// Every presenter callback of every participant ran on its presenter's queue.
    var allPresenterCallbacksOnTheirQueues: Bool {
        participants.allSatisfy { participant in
            participant.events.filter { $0["event"]?.stringValue == "presenter" }.allSatisfy { $0["onQueue"]?.boolValue == true }
        }
    }

    deinit {
        for participant in participants { participant.close() }
        daemon?.stop()
    }
}

extension WireValue {
    /// The event's monotonic time.
    var t: Int64 { self["t"]?.intValue ?? 0 }
}
