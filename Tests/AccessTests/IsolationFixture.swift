import Folio
import FolioTesting
import Foundation
import Testing

/// A private Folio world for the isolation tests: a daemon, two registered apps (Alpha opens
/// documents in place and declares `.srt` files as related items; Beta copies), and a way to run
/// the stand-in app (`FolioAppHelper`) as either, and the scripted picker.
final class IsolationFixture: @unchecked Sendable {
    static let alpha = "com.example.Alpha"
    static let beta = "com.example.Beta"

    let dir: TemporaryDirectory
    let environment: [String: String]
    private(set) var daemon: DaemonProcess

    init(_ name: String) throws {
        dir = try TemporaryDirectory(name)
        environment = dir.xdgEnvironment()
        for (id, inPlace) in [(Self.alpha, true), (Self.beta, false)] {
            let manifest = try dir.write(
                "\(id).json",
                """
                {"CFBundleIdentifier": "\(id)", "CFBundleName": "\(id.split(separator: ".").last!)",
                 "LSSupportsOpeningDocumentsInPlace": \(inPlace), "CFBundleExecutable": "\(ProcessRunner.builtExecutable("FolioAppHelper").path)",
                 "NSUbiquitousContainers": {"iCloud.\(id)": {"NSUbiquitousContainerIsDocumentScopePublic": true}},
                 "CFBundleDocumentTypes": [
                   {"CFBundleTypeName": "Text", "LSItemContentTypes": ["public.plain-text"], "LSHandlerRank": "\(inPlace ? "Owner" : "Alternate")"},
                   {"CFBundleTypeName": "Subtitles", "CFBundleTypeExtensions": ["srt"], "NSIsRelatedItemType": true, "CFBundleTypeRole": "None"}
                 ]}
                """)
            let registered = try ProcessRunner.folio(["app", "register", manifest.path], environment: environment)
            guard registered.status == 0 else { throw TestFailure("register \(id): \(registered.stderr)") }
        }
        daemon = try DaemonProcess(environment: environment)
        _ = try daemon.waitForListening()
    }

    deinit { daemon.stop() }

    /// Stops the daemon and starts a new one on the same data.
    func restartDaemon() throws {
        daemon.stop()
        daemon = try DaemonProcess(environment: environment)
        _ = try daemon.waitForListening()
    }

    func container(_ app: String) -> AppContainer {
        AppContainer(appIdentifier: app, paths: FolioPaths(environment: environment))
    }

    /// Runs the stand-in app as `app` and returns its JSON line.
    @discardableResult
    func app(_ app: String?, _ arguments: [String]) throws -> WireValue {
        var env = environment
        env["FOLIO_COORDINATION"] = "daemon"
        if let app { env["FOLIO_APP_ID"] = app }
        let output = try ProcessRunner.run(ProcessRunner.builtExecutable("FolioAppHelper"), arguments, environment: env)
        guard let line = output.stdout.split(separator: "\n").last, let value = try? WireValue(parsing: Array(line.utf8)) else {
            throw TestFailure("app helper \(arguments) printed no JSON (status \(output.status)): \(output.stdout) \(output.stderr)")
        }
        return value
    }

    func folio(_ arguments: [String]) throws -> ProcessRunner.Output {
        try ProcessRunner.folio(arguments, environment: environment)
    }

    /// Starts the scripted picker front end answering with `answers` (each a list of paths, or nil
    /// to cancel); returns it running. Its stdout collects the requests it was shown.
    func scriptedPicker(_ answers: [[String]?]) throws -> PickerFrontEnd {
        let script = dir.child("picker-\(UUID().uuidString).json")
        let list = answers.map { answer -> WireValue in
            answer.map { ["paths": .array($0.map { .string($0) })] } ?? ["cancel": true]
        }
        try Data(WireValue.array(list).serialized()).write(to: script)
        return try PickerFrontEnd(arguments: ["pick", "--serve", "--script", script.path], environment: environment)
    }
}

/// `folio pick --serve` running in the background.
final class PickerFrontEnd: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()

    init(arguments: [String], environment: [String: String]) throws {
        process.executableURL = ProcessRunner.folioExecutable()
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Attached once it says so on stderr.
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !text.contains("serving the document picker") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard text.contains("serving the document picker") else { throw TestFailure("the picker did not attach: \(text)") }
    }

    /// Stops it and returns the requests it was shown.
    func stop() -> [WireValue] {
        process.terminate()
        process.waitUntilExit()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? WireValue(parsing: Array($0.utf8)) }
    }

    deinit { if process.isRunning { process.terminate() } }
}
