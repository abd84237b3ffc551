import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The page's changes go through coordination as the daemon's own client: an app presenting a
/// document (a real helper process, connected to the daemon) hears it move when the page renames
/// it, and is asked to save and step aside first.
@Suite("The page coordinates", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct CoordinatedPageTests {
    /// The coordination helper in the background, reading commands and writing events.
    final class Presenter: @unchecked Sendable {
        private let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private let lock = NSLock()
        private var text = ""

        init(environment: [String: String]) throws {
            var environment = environment
            environment["FOLIO_COORDINATION"] = "daemon"
            process.executableURL = ProcessRunner.builtExecutable("FolioCoordinationHelper")
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let handle = output.fileHandleForReading
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    lock.withLock { text += String(decoding: chunk, as: UTF8.self) }
                }
            }
        }

        func send(_ command: String) { input.fileHandleForWriting.write(Data((command + "\n").utf8)) }

        /// Waits until the events hold `fragment`.
        func wait(for fragment: String, seconds: Double = 15) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while !lock.withLock({ text.contains(fragment) }) {
                guard Date() < deadline else { throw BrowserError("the presenter never said \(fragment): \(lock.withLock { text })") }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func stop() {
            send(#"{"op": "exit"}"#)
            if process.isRunning { process.terminate() }
        }
    }

    @Test func aPresenterHearsThePagesRename() async throws {
        let rig = try BrowserRig("coordinated") { home in
            try Data("draft".utf8).write(to: URL(fileURLWithPath: home + "/Documents/draft.txt"))
        }
        let documents = rig.home + "/Documents"
        let presenter = try Presenter(environment: rig.environment)
        defer { presenter.stop() }
        try await presenter.wait(for: #""event":"ready""#)
        presenter.send(#"{"op": "presenter", "name": "editor", "path": "\#(documents)/draft.txt"}"#)
        try await presenter.wait(for: #""event":"added""#)
        try await rig.withPage(path: documents) { page in
            try await page.click(BrowserPageTests.selector(documents + "/draft.txt"))
            try await page.click("#rename")
            try await page.clear("#name-input")
            try await page.type("#name-input", "final.txt")
            try await page.click("#name-ok")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the renamed item", arguments: [BrowserPageTests.selector(documents + "/final.txt")])
            // The presenter was asked to step aside for the move, and heard where its document went.
            try await presenter.wait(for: #""callback":"relinquishToWriter""#)
            try await presenter.wait(for: #""callback":"didMove""#)
            try await presenter.wait(for: documents + "/final.txt")
        }
    }
}
