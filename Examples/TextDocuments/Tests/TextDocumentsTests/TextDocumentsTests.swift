import Foundation
import Testing

/// End to end: the `textdoc` app in real processes, two of them editing one file.
@Suite("textdoc end to end", .serialized)
struct TextDocumentsTests {
    static var textdoc: URL {
        var url = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { url.deleteLastPathComponent() }
        return url.appendingPathComponent(".build/debug/textdoc")
    }

    /// A private XDG tree and folder, so the test's versions and coordination stay its own.
    let root: URL
    let environment: [String: String]

    init() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("textdoc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        for key in ["XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"] {
            environment[key] = root.appendingPathComponent(key).path
        }
        self.environment = environment
    }

    func run(_ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = Self.textdoc
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// An interactive `textdoc edit` session.
    final class Session: @unchecked Sendable {
        let process = Process()
        let input = Pipe()
        private let lock = NSLock()
        private var text = ""

        init(_ file: String, environment: [String: String]) throws {
            let output = Pipe()
            process.executableURL = TextDocumentsTests.textdoc
            process.arguments = ["edit", file]
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    lock.withLock { text += String(decoding: chunk, as: UTF8.self) }
                }
            }
        }

        var transcript: String { lock.withLock { text } }

        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

        func waitFor(_ fragment: String, timeout: Double = 10) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if transcript.contains(fragment) { return true }
                usleep(20_000)
            }
            return false
        }

        func quit() {
            send("quit")
            process.waitUntilExit()
        }
    }

    @Test func createEditAutosaveReloadConflictResolve() throws {
        let file = root.appendingPathComponent("notes.txt").path
        #expect(try run("new", file, "first line").contains("created notes.txt"))
        _ = try run("append", file, "second line")
        #expect(try run("show", file) == "first line\nsecond line\n")

        // An editing session reloads when another process saves.
        let session = try Session(file, environment: environment)
        #expect(session.waitFor("loaded: first line | second line"))
        _ = try run("append", file, "third line from elsewhere")
        #expect(session.waitFor("loaded: first line | second line | third line from elsewhere"), "\(session.transcript)")

        // Autosave: an edit reaches the disk without an explicit save.
        session.send("append typed in the session")
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !((try? String(contentsOfFile: file, encoding: .utf8))?.contains("typed in the session") ?? false) {
            usleep(50_000)
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains("typed in the session"))

        // A conflict: unsaved edits in the session while another process saves different text.
        session.send("append session edit")
        #expect(session.waitFor("appended\nappended"))
        _ = try run("append", file, "competing edit")
        #expect(session.waitFor("inConflict"), "\(session.transcript)")
        session.quit()
        let conflicts = try run("conflicts", file)
        #expect(conflicts.contains("competing edit"), "\(conflicts)")
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains("session edit"))

        #expect(try run("resolve", file).contains("resolved"))
        #expect(try run("conflicts", file).contains("no conflicts"))
    }
}
