import Folio
import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A write killed mid-way leaves the folder provider's temporary file beside its target; the next
/// listing removes it once nothing has written to it for ten minutes, and never one still being
/// written.
@Suite("Folder provider: temporary files left by killed writes", .elasticPool)
struct TemporaryLeftoverTests {
    @Test func aListingRemovesStaleTemporaryFilesOnly() async throws {
        let dir = try TemporaryDirectory("temporary-leftovers")
        let stale = try dir.write("sub/.folio-tmp-0d1e", Data(repeating: 7, count: 1 << 20)).path
        let fresh = try dir.write("sub/.folio-tmp-a11e", "being written").path
        try dir.write("sub/kept.txt", "the user's file")
        // Last written two hours ago.
        var times = [timespec(tv_sec: time(nil) - 7200, tv_nsec: 0), timespec(tv_sec: time(nil) - 7200, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, stale, &times, 0) == 0)
        let provider = try LocalFolderProvider(root: dir.path)
        let request = FileProviderRequest(temporaryDirectory: FileManager.default.temporaryDirectory)
        let page = try await provider.enumerateItems(in: .workingSet, startingAt: .initialPageSortedByName, request: request)
        #expect(page.items.map(\.filename).sorted() == ["kept.txt", "sub"], "\(page.items.map(\.filename))")
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: fresh))
        #expect(FileManager.default.fileExists(atPath: dir.path + "/sub/kept.txt"))
    }
}
