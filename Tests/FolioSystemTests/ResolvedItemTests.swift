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
}
