// Samples 3–4 of Apple's "Synchronizing documents in the iCloud environment" (SimpleiCloudDocument):
// removing a document with a coordinated write for deleting (MainViewController+Document.swift),
// and "latest version wins" conflict resolution (DetailViewController+Conflict.swift).
//
// Lines changed from Apple's: `import UIKit` → `import Folio` (+ Foundation). The functions are
// members of view controllers in Apple's project; here they are members of a plain class.
@testable import Folio
import FolioTestTraits
import Foundation
import Testing

final class SimpleiCloudDocumentController: @unchecked Sendable {
    // Remove a document.
    //
    func removeDocument(at fileURL: URL) {
        DispatchQueue.global().async {
            NSFileCoordinator().coordinate(writingItemAt: fileURL, options: .forDeleting, error: nil) { newURL in
                do {
                    try FileManager.default.removeItem(atPath: newURL.path)
                } catch let error as NSError {
                    print(error.localizedDescription)
                }
            }
        }
    }

    // Make the latest version current and remove the others.
    //
    func pickLatestVersion(for documentURL: URL) -> Bool {
        guard let versionsInConflict = NSFileVersion.unresolvedConflictVersionsOfItem(at: documentURL),
              let currentVersion = NSFileVersion.currentVersionOfItem(at: documentURL) else {
            return false
        }
        var shouldRevert = false
        var winner = currentVersion
        for version in versionsInConflict {
            if let date1 = version.modificationDate, let date2 = winner.modificationDate,
               date1 > date2 {
                winner = version
            }
        }
        if winner != currentVersion {
            do {
                try winner.replaceItem(at: documentURL)
                shouldRevert = true
            } catch {
                print("Failed to replace version: \(error)")
            }
        }
        do {
            try NSFileVersion.removeOtherVersionsOfItem(at: documentURL)
        } catch {
            print("Failed to remove other versions: \(error)")
        }
        return shouldRevert
    }
}

@Suite("Apple's samples: Synchronizing documents in the iCloud environment", .elasticPool)
struct SimpleiCloudDocumentTests {
    @Test func removeDocumentDeletesThroughCoordination() async throws {
        let world = try PortWorld("remove")
        let url = world.url("Old.sicd")
        try Data("old".utf8).write(to: url)
        SimpleiCloudDocumentController().removeDocument(at: url)
        #expect(await world.wait { !FileManager.default.fileExists(atPath: url.path) })
    }

    /// Two conflict versions from other devices, one older and one newer than the file: the newer
    /// replaces the file, and no other version is left.
    @Test func theLatestVersionWins() async throws {
        let world = try PortWorld("latest")
        try await world.run {
            let url = world.url("Shared.sicd")
            try Data("mine".utf8).write(to: url)
            var times = [timeval(tv_sec: 1_700_000_000, tv_usec: 0), timeval(tv_sec: 1_700_000_000, tv_usec: 0)]
            #expect(utimes(url.path, &times) == 0)
            _ = try world.store.addVersion(ofItemAt: url.path, data: Data("older".utf8), modified: Date(timeIntervalSince1970: 1_600_000_000), kind: .conflict, isConflict: true)
            _ = try world.store.addVersion(ofItemAt: url.path, data: Data("newest".utf8), modified: Date(timeIntervalSince1970: 1_750_000_000), kind: .conflict, isConflict: true)
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.count == 2)

            #expect(SimpleiCloudDocumentController().pickLatestVersion(for: url))
            #expect(try String(contentsOf: url, encoding: .utf8) == "newest")
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty ?? true)
            #expect(NSFileVersion.otherVersionsOfItem(at: url)?.isEmpty ?? true)
        }
    }
}
