#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import FolioSystem
import FolioWire
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The socket address and the item marks read with raw memory (run under AddressSanitizer too).
@Suite("Unix socket addresses and item marks", .elasticPool)
struct UnixSocketAddressTests {
    @Test func bindsConnectsAndRefusesAPathTooLong() throws {
        let dir = try TemporaryDirectory("unix-address")
        let path = dir.child("s.sock").path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        #expect(UnixSocketAddress.bind(listener, to: path) == 0 && listen(listener, 1) == 0)
        let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        #expect(UnixSocketAddress.connect(client, to: path) == 0)
        let accepted = accept(listener, nil, nil)
        #expect(accepted >= 0)
        close(accepted)
        // 107 bytes fit (with the terminator, 108); 108 do not, and nothing is connected.
        let other = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(other) }
        #expect(UnixSocketAddress.connect(other, to: "/" + String(repeating: "x", count: 107)) == -1 && errno == ENAMETOOLONG)
        #expect(UnixSocketAddress.with("/" + String(repeating: "x", count: 106)) { _, length in length } != nil)
    }

    @Test func anItemKeepsItsMarkAndANewOneGetsAnother() throws {
        let dir = try TemporaryDirectory("item-mark")
        let first = dir.child("a").path
        _ = FileManager.default.createFile(atPath: first, contents: Data("a".utf8))
        let mark = try #require(FileIncarnation.mark(ofItemAt: first))
        // ext4 (where the tests run) keeps both.
        #expect(mark.hasPrefix("b") && mark.contains("g"), "\(mark)")
        #expect(rename(first, first + ".moved") == 0)
        #expect(FileIncarnation.mark(ofItemAt: first + ".moved") == mark)
        _ = FileManager.default.createFile(atPath: first, contents: Data("b".utf8))
        #expect(FileIncarnation.mark(ofItemAt: first) != mark)
        #expect(FileIncarnation.mark(ofItemAt: dir.child("missing").path) == nil)
        // Followed, a link gives its target's mark.
        #expect(symlink(first + ".moved", dir.child("link").path) == 0)
        #expect(FileIncarnation.mark(ofItemAt: dir.child("link").path, followSymlinks: true) == mark)
        #expect(FileIncarnation.mark(ofItemAt: dir.child("link").path) != mark)
    }
}
