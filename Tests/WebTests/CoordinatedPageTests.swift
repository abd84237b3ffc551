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
    /// The coordination helper in the background (through the daemon), reading commands and
    /// writing events.
    static func presenter(_ environment: [String: String]) throws -> BackgroundProcess {
        var environment = environment
        environment["FOLIO_COORDINATION"] = "daemon"
        return try BackgroundProcess(ProcessRunner.builtExecutable("FolioCoordinationHelper"), environment: environment)
    }

    @Test func aPresenterHearsThePagesRename() async throws {
        let rig = try BrowserRig("coordinated") { home in
            try Data("draft".utf8).write(to: URL(fileURLWithPath: home + "/Documents/draft.txt"))
        }
        let documents = rig.home + "/Documents"
        let presenter = try Self.presenter(rig.environment)
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
