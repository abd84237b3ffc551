import FolioTesting
import FolioSystem
import FolioTestTraits
import Foundation
import SystemPackage
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// An item resolved once stays the item it was, whatever its path names later; a path resolved
/// beneath a folder cannot leave it.
@Suite("Resolved items", .elasticPool)
struct ResolvedItemTests {
    @Test func theItemIsWhatWasOpenedNotWhatThePathNamesLater() throws {
        let dir = try TemporaryDirectory("resolved-item")
        let file = try dir.write("a/doc.txt", "first").path
        let item = try ResolvedItem.resolve(file)
        let real = try FileStatus.canonicalPath(file)
        #expect(item.exists && item.path == real && item.status.kind == .regular)
        // Replaced at its path: the item is still the first file.
        #expect(rename(file, dir.path + "/a/old.txt") == 0)
        try dir.write("a/doc.txt", "second")
        let reopened = try item.open(.readOnly)
        defer { try? reopened.close() }
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = try bytes.withUnsafeMutableBytes { try reopened.read(into: $0) }
        #expect(String(decoding: bytes[0..<count], as: UTF8.self) == "first")
        let moved = try FileStatus.canonicalPath(dir.path + "/a/old.txt")
        #expect(try ResolvedItem.location(of: item.descriptor) == moved)
    }

    @Test func aMissingItemResolvesToItsFolderAndNames() throws {
        let dir = try TemporaryDirectory("resolved-missing")
        try FileManager.default.createDirectory(atPath: dir.path + "/a", withIntermediateDirectories: true)
        let item = try ResolvedItem.resolve(dir.path + "/a/b/c.txt", allowMissing: true)
        #expect(!item.exists && item.missing == ["b", "c.txt"] && item.status.kind == .directory)
        let folder = try FileStatus.canonicalPath(dir.path + "/a")
        #expect(item.path == folder + "/b/c.txt")
        // A link that leads nowhere is not a place to create through.
        #expect(symlink(dir.path + "/elsewhere", dir.path + "/a/dangling") == 0)
        #expect(throws: ResolvedItem.Failure.self) { try ResolvedItem.resolve(dir.path + "/a/dangling", allowMissing: true) }
        #expect(throws: ResolvedItem.Failure.missing) { try ResolvedItem.resolve(dir.path + "/a/none.txt") }
    }

    @Test func beneathAFolderNothingLeadsOut() throws {
        let dir = try TemporaryDirectory("resolved-beneath")
        try dir.write("outside.txt", "the user's")
        try dir.write("box/inside.txt", "the app's")
        #expect(symlink(dir.path + "/outside.txt", dir.path + "/box/absolute") == 0)
        #expect(symlink("../outside.txt", dir.path + "/box/relative") == 0)
        let box = try ResolvedItem.resolve(dir.path + "/box")
        #expect(try ResolvedItem.resolve("inside.txt", beneath: box).status.kind == .regular)
        for escape in ["../outside.txt", "absolute", "relative", "/proc/self/root" + dir.path + "/outside.txt"] {
            #expect(throws: ResolvedItem.Failure.self, "\(escape)") { try ResolvedItem.resolve(escape, beneath: box) }
        }
        let parent = try box.parent()
        let top = try FileStatus.canonicalPath(dir.path)
        #expect(parent.path == top)
    }

    @Test func theDynamicSectionOfAProgramNamesItsLibraries() throws {
        let shell = try #require(FileManager.default.contents(atPath: "/bin/sh"))
        let section = try #require(ELFDynamicSection(bytes: Array(shell)))
        #expect(section.needed.contains { $0.hasPrefix("libc.so") }, "\(section.needed)")
        #expect(ELFDynamicSection(bytes: Array("#!/bin/sh\necho hi\n".utf8)) == nil)
        // Cut anywhere, it is refused or read, never a trap.
        for length in stride(from: 0, to: min(shell.count, 8192), by: 97) { _ = ELFDynamicSection(bytes: Array(shell.prefix(length))) }
    }

    /// A folder is copied through descriptors: its files and folders with their tags but not their
    /// identity, a link as a link (never what it leads to), nothing else; the copy is made new (an
    /// existing name is refused).
    @Test func aFolderIsCopiedThroughDescriptorsLinksAsLinks() throws {
        let dir = try TemporaryDirectory("resolved-copy")
        try dir.write("secret.txt", "the user's secret")
        try dir.write("pkg/Contents/a.txt", "a")
        try dir.write("pkg/b.txt", "b")
        #expect(symlink(dir.path + "/secret.txt", dir.path + "/pkg/Contents/leak") == 0)
        #expect(mkfifo(dir.path + "/pkg/pipe", 0o600) == 0)
        try FilePath(dir.path + "/pkg/b.txt").setExtendedAttribute(named: "user.xdg.tags", to: Array("red".utf8))
        try FilePath(dir.path + "/pkg/b.txt").setExtendedAttribute(named: "user.folio.id", to: Array("0d1e".utf8))
        try FileManager.default.createDirectory(atPath: dir.path + "/out", withIntermediateDirectories: true)
        let source = try ResolvedItem.resolve(dir.path + "/pkg"), folder = try ResolvedItem.resolve(dir.path + "/out")
        let copy = try source.copy(into: folder, named: "pkg")
        #expect(copy.status.kind == .directory && copy.path.hasSuffix("/out/pkg"))
        #expect(try String(contentsOfFile: dir.path + "/out/pkg/Contents/a.txt", encoding: .utf8) == "a")
        #expect(try String(contentsOfFile: dir.path + "/out/pkg/b.txt", encoding: .utf8) == "b")
        // Tags come along; the identity does not (a copy is a new document).
        #expect(try FilePath(dir.path + "/out/pkg/b.txt").extendedAttribute(named: "user.xdg.tags") == Array("red".utf8))
        #expect((try? FilePath(dir.path + "/out/pkg/b.txt").extendedAttribute(named: "user.folio.id")) == nil)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.path + "/out/pkg/Contents/leak") == dir.path + "/secret.txt")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/out/pkg/pipe"))
        #expect(throws: Errno.fileExists) { try source.copy(into: folder, named: "pkg") }
        #expect(throws: Errno.invalidArgument) { try source.copy(into: folder, named: "../pkg2") }
    }

    /// An item moves only as itself: once its name holds another file, the move is refused and
    /// nothing moves; otherwise it lands as the same inode.
    @Test func anItemMovesOnlyAsItself() throws {
        let dir = try TemporaryDirectory("resolved-move")
        let path = try dir.write("a/doc.txt", "mine").path
        try FileManager.default.createDirectory(atPath: dir.path + "/b", withIntermediateDirectories: true)
        let item = try ResolvedItem.resolve(path), folder = try ResolvedItem.resolve(dir.path + "/b")
        // Another file takes the name.
        #expect(rename(path, dir.path + "/a/kept.txt") == 0)
        try dir.write("a/doc.txt", "someone else's")
        #expect(throws: Errno.resourceBusy) { try item.move(into: folder, named: "doc.txt") }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "someone else's")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/b/doc.txt"))
        // Its own name back: it moves, the same inode.
        #expect(rename(dir.path + "/a/kept.txt", path) == 0)
        let moved = try item.move(into: folder, named: "doc.txt")
        #expect(moved.status.inode == item.status.inode && moved.path.hasSuffix("/b/doc.txt"))
        #expect(try String(contentsOfFile: dir.path + "/b/doc.txt", encoding: .utf8) == "mine")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Across file systems a move is a copy through descriptors and the removal of the item, found
    /// again by its inode.
    @Test func aMoveAcrossFileSystemsCopiesThenRemoves() throws {
        guard FileManager.default.fileExists(atPath: "/dev/shm") else { return }
        let dir = try TemporaryDirectory("resolved-move-across")
        try dir.write("pkg/inner/a.txt", "across")
        let shm = "/dev/shm/folio-move-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: shm, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: shm) }
        let item = try ResolvedItem.resolve(dir.path + "/pkg"), folder = try ResolvedItem.resolve(shm)
        guard item.status.device != folder.status.device else { return }
        let moved = try item.move(into: folder, named: "pkg")
        #expect(moved.path == shm + "/pkg")
        #expect(try String(contentsOfFile: shm + "/pkg/inner/a.txt", encoding: .utf8) == "across")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/pkg"))
    }
}
