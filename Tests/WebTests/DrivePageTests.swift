import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The drive in the browser page: set up (checked before it is saved), a pass on demand, and a
/// download whose progress the page shows as it goes, and which can be cancelled. The drive is the
/// example out-of-process provider (`Examples/PythonProvider`) over a folder, slowed to a MiB per
/// 0.2 s so that progress can be watched.
@Suite("Drive page", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct DrivePageTests {
    static var provider: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
            + "/Examples/PythonProvider/folder_provider.py"
    }

    @Test func setUpSyncAndWatchADownload() async throws {
        let remote = try TemporaryDirectory("web-drive-remote")
        try Data(repeating: 7, count: 6 << 20).write(to: URL(fileURLWithPath: remote.path + "/big.bin"))
        try Data(repeating: 9, count: 12 << 20).write(to: URL(fileURLWithPath: remote.path + "/bigger.bin"))
        try Data("hello".utf8).write(to: URL(fileURLWithPath: remote.path + "/note.txt"))
        let rig = try BrowserRig("drive", extraEnvironment: ["FOLDER_PROVIDER_CHUNK_DELAY": "0.2", "FOLIO_DRIVE_INTERVAL": "3600"])
        let drive = FolioPaths(environment: rig.environment).driveDirectory
        let configuration = FolioPaths(environment: rig.environment).driveConfiguration
        try await rig.withPage(path: rig.home + "/Documents") { page in
            try await page.click("button[data-view=drive]")
            try await page.wait(for: "return document.getElementById('drive-summary').textContent.startsWith('No drive')", "no drive yet")

            // A server that does not answer: refused, nothing saved.
            try await page.type("#drive-url", "http://127.0.0.1:9/dav/")
            try await page.click("#drive-save")
            try await page.wait(for: "return document.getElementById('drive-error').textContent.includes('the drive cannot be set up: the server could not be reached')", "the refusal")
            #expect(!FileManager.default.fileExists(atPath: configuration))

            // The provider program over the remote folder.
            try await page.run("const k = document.getElementById('drive-kind'); k.value = 'provider'; k.dispatchEvent(new Event('change'))")
            try await page.clear("#drive-url")
            try await page.type("#drive-url", Self.provider)
            try await page.type("#drive-arguments", remote.path)
            let typed = try await page.run("return [document.getElementById('drive-url').value, document.getElementById('drive-arguments').value]") as? [String]
            #expect(typed == [Self.provider, remote.path])
            try await page.click("#drive-save")
            try await page.wait(for: "return document.getElementById('drive-summary').textContent.includes('local')", "the drive saved")
            #expect(FileManager.default.fileExists(atPath: configuration))
            try await page.click("#drive-sync")
            try await page.wait(for: "return document.getElementById('status').textContent.startsWith('Synced')", "the pass")
            try await page.wait(for: "return document.querySelectorAll('#drive-passes li:not(.failed)').length >= 1 && !document.getElementById('drive-passes').textContent.includes('No pass')", "the pass listed")
            try await BrowserRig.screenshots(of: page, named: "drive")

            // The drive's folder: placeholders, in the cloud.
            try await page.click("button.place[data-path=\"\(drive)\"]")
            let big = drive + "/big.bin"
            try await page.wait(for: "return (document.querySelector(arguments[0])?.textContent ?? '').includes('in the cloud')", "big.bin in the cloud", arguments: [BrowserPageTests.selector(big)])
            #expect(!FileManager.default.fileExists(atPath: big))
            try await page.click(BrowserPageTests.selector(big))
            try await page.click("#download")
            // Progress arrives while it downloads, then the file is local.
            try await page.wait(for: "return (window.folioProgressSeen || []).some(f => f > 0 && f < 1)", "a download's progress under way", seconds: 30)
            try await page.wait(for: "return !!document.querySelector(arguments[0] + ' .badge.downloading')", "the progress in the list", arguments: [BrowserPageTests.selector(big)])
            try await page.wait(for: "return !(document.querySelector(arguments[0])?.textContent ?? 'in the cloud').includes('in the cloud') && !document.querySelector(arguments[0] + ' .badge.downloading')", "big.bin downloaded", arguments: [BrowserPageTests.selector(big)], seconds: 30)
            #expect(FileManager.default.contents(atPath: big) == Data(repeating: 7, count: 6 << 20))

            // Keep it downloaded, then let it go again: evicted, it is in the cloud once more.
            try await page.click(BrowserPageTests.selector(big))
            try await page.click("#pin")
            try await page.wait(for: "return document.getElementById('pin').getAttribute('aria-pressed') === 'true'", "big.bin pinned")
            try await page.click("#pin")
            try await page.wait(for: "return document.getElementById('pin').getAttribute('aria-pressed') === 'false'", "big.bin unpinned")
            try await page.click("#evict")
            try await page.wait(for: "return (document.querySelector(arguments[0])?.textContent ?? '').includes('in the cloud')", "big.bin evicted", arguments: [BrowserPageTests.selector(big)])
            #expect(!FileManager.default.fileExists(atPath: big))

            // Another, cancelled half way: it stays in the cloud.
            let bigger = drive + "/bigger.bin"
            try await page.click(BrowserPageTests.selector(bigger))
            try await page.click("#download")
            try await page.wait(for: "return !!document.querySelector(arguments[0] + ' button.cancel-download')", "the cancel button", arguments: [BrowserPageTests.selector(bigger)], seconds: 30)
            try await page.click(BrowserPageTests.selector(bigger) + " button.cancel-download")
            try await page.wait(for: "return document.getElementById('status').textContent.startsWith('Cancelled')", "the cancel said")
            try await page.wait(for: "return !document.querySelector(arguments[0] + ' .badge.downloading')", "the download stopped", arguments: [BrowserPageTests.selector(bigger)], seconds: 30)
            #expect(!FileManager.default.fileExists(atPath: bigger))

            // Every file gone from the server at once: the pass holds the deletions until confirmed.
            for name in ["big.bin", "bigger.bin", "note.txt"] { try FileManager.default.removeItem(atPath: remote.path + "/" + name) }
            try await page.click("button[data-view=drive]")
            try await page.click("#drive-sync")
            try await page.wait(for: "return !document.getElementById('drive-held').hidden && document.getElementById('drive-held-text').textContent.includes('held back 3')", "the hold")
            #expect(FileManager.default.fileExists(atPath: drive + "/note.txt.folio-cloud") || FileManager.default.fileExists(atPath: drive + "/note.txt"))
            try await page.click("#drive-confirm")
            try await page.wait(for: "return document.getElementById('drive-held').hidden", "the hold lifted")
            let left = try FileManager.default.contentsOfDirectory(atPath: drive).filter { !$0.hasPrefix(".") }
            #expect(left.isEmpty, "\(left)")
        }
    }
}
