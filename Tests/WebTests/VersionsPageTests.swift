import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Versions and conflicts in the browser page: the conflict resolver shows both versions side by
/// side with a text diff and keeps one or both; the versions dialog restores an older version.
@Suite("Versions page", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct VersionsPageTests {
    static func selector(_ path: String) -> String { BrowserPageTests.selector(path) }

    /// A document with an older saved version and an unresolved conflict version, in the daemon's
    /// own version store.
    private static func rig(_ name: String) throws -> (BrowserRig, String) {
        let rig = try BrowserRig(name) { home in
            try Data("line one\nline two\n".utf8).write(to: URL(fileURLWithPath: home + "/Documents/essay.txt"))
        }
        let essay = rig.home + "/Documents/essay.txt"
        let store = VersionStore(directory: FolioPaths(environment: rig.environment).versionsDirectory)
        try store.addVersion(ofItemAt: essay, data: Data("line one\n".utf8), modified: Date(timeIntervalSinceNow: -3600), kind: .saved)
        try store.addVersion(ofItemAt: essay, data: Data("line one\nline two from the laptop\n".utf8), kind: .conflict, isConflict: true)
        return (rig, essay)
    }

    private static func contents(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theResolverKeepsBothUnderTwoNames() async throws {
        let (rig, essay) = try Self.rig("conflict-both")
        let documents = rig.home + "/Documents"
        try await rig.withPage(path: documents) { page in
            try await page.wait(for: "return !!document.querySelector(arguments[0] + ' .badge.conflict')", "the conflict badge", arguments: [Self.selector(essay)])
            try await page.click("button[data-view=conflicts]")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the document among the conflicts", arguments: [Self.selector(essay)])
            try await page.click(Self.selector(essay))
            try await page.click("#resolve")
            try await page.wait(for: "return document.querySelectorAll('#conflict-columns section').length === 2", "two versions side by side")
            // The other version's diff against this one: its own second line added, ours removed.
            let added = try await page.run("return [...document.querySelectorAll('#conflict-columns section:nth-child(2) .diff .added')].map(e => e.textContent)") as? [String]
            let removed = try await page.run("return [...document.querySelectorAll('#conflict-columns section:nth-child(2) .diff .removed')].map(e => e.textContent)") as? [String]
            #expect(added == ["line two from the laptop"])
            #expect(removed == ["line two"])
            let keep = try await page.accessibility("#conflict-columns section:nth-child(2) button.keep")
            #expect(keep.role == "button" && keep.label.hasPrefix("Keep The version from"))
            try await BrowserRig.screenshots(of: page, named: "conflict")
            try await page.click("#conflict-both")
            try await page.wait(for: "return !document.getElementById('conflict-dialog').open", "the resolver closed")
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 0", "no conflicts left")
        }
        #expect(Self.contents(essay) == "line one\nline two\n")
        let copies = try FileManager.default.contentsOfDirectory(atPath: documents).filter { $0.hasPrefix("essay (") }
        #expect(copies.count == 1)
        #expect(copies.first.flatMap { Self.contents(documents + "/" + $0) } == "line one\nline two from the laptop\n")
        let store = VersionStore(directory: FolioPaths(environment: rig.environment).versionsDirectory)
        #expect(store.documentsWithUnresolvedConflicts().isEmpty)
    }

    @Test func theResolverKeepsTheOtherVersion() async throws {
        let (rig, essay) = try Self.rig("conflict-other")
        try await rig.withPage(path: rig.home + "/Documents") { page in
            try await page.wait(for: "return !!document.querySelector(arguments[0] + ' .badge.conflict')", "the conflict badge", arguments: [Self.selector(essay)])
            try await page.click(Self.selector(essay))
            try await page.click("#resolve")
            try await page.wait(for: "return document.querySelectorAll('#conflict-columns section').length === 2", "two versions side by side")
            try await page.click("#conflict-columns section:nth-child(2) button.keep")
            try await page.wait(for: "return !document.querySelector(arguments[0] + ' .badge.conflict')", "the badge gone", arguments: [Self.selector(essay)])
        }
        #expect(Self.contents(essay) == "line one\nline two from the laptop\n")
        let store = VersionStore(directory: FolioPaths(environment: rig.environment).versionsDirectory)
        #expect(store.documentsWithUnresolvedConflicts().isEmpty)
    }

    @Test func restoringAnOlderVersionKeepsTheCurrentOne() async throws {
        let (rig, essay) = try Self.rig("restore")
        try await rig.withPage(path: rig.home + "/Documents") { page in
            try await page.click(Self.selector(essay))
            try await page.click("#versions")
            try await page.wait(for: "return document.querySelectorAll('#versions-list button.restore-version').length >= 2", "the versions listed")
            // The saved version (an hour old): preview, then restore.
            let label = try await page.run(
                "return [...document.querySelectorAll('#versions-list button.restore-version')].map(b => b.getAttribute('aria-label')).find(l => l.includes('(saved)'))") as? String
            let restore = try #require(label)
            try await page.click("#versions-list button[aria-label=\"\(restore)\"]")
            try await page.wait(for: "return !document.getElementById('versions-dialog').open", "the dialog closed")
            try await page.wait(for: "return document.getElementById('status').textContent.startsWith('Restored')", "the restore said")
        }
        #expect(Self.contents(essay) == "line one\n")
        // What was replaced is a version now: the restore can be undone.
        let store = VersionStore(directory: FolioPaths(environment: rig.environment).versionsDirectory)
        let kept = try store.versions(ofItemAt: essay).records.map { try store.readObject($0.object) }
        #expect(kept.contains(Data("line one\nline two\n".utf8)))
    }
}
