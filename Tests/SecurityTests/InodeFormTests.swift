#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
@testable import FolioDaemon
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

/// An item that cannot hold an identity attribute is known by its inode form: device, inode and
/// birth time (or inode generation), so a later file the file system gives the same inode is not
/// the granted or bookmarked one; a form without that mark names nothing.
@Suite("Inode forms", .elasticPool)
struct InodeFormTests {
    @Test func aReusedInodeIsAnotherItem() throws {
        let dir = try TemporaryDirectory("inode-form")
        let first = dir.child("granted.txt").path
        _ = FileManager.default.createFile(atPath: first, contents: Data("the user's words".utf8))
        let status = try FileStatus(path: FilePath(first), followSymlinks: true)
        let form = DocumentIdentity.inodeForm(ofItemAt: first, device: status.device, inode: status.inode, followSymlinks: true)
        // ext4 (where the tests run) records birth times and generations.
        #expect(form.split(separator: "-").count == 4 && form.split(separator: "-").last?.first == "b" && form.contains("g"), "\(form)")
        #expect(DocumentIdentity.isValid(form))
        #expect(DocumentIdentity.inodeForm(form, namesItemAt: first, status: status, followSymlinks: true))
        // A file made within the same clock tick as a deleted one can share its birth time; the
        // generation still tells them apart. A part unknown then (or now) is not compared.
        let birth = String(form.prefix { $0 != "g" })
        let otherGeneration = birth + "g" + String((UInt64(form.split(separator: "g").last ?? "0") ?? 0) &+ 1)
        #expect(!DocumentIdentity.inodeForm(otherGeneration, namesItemAt: first, status: status, followSymlinks: true))
        #expect(DocumentIdentity.inodeForm(birth, namesItemAt: first, status: status, followSymlinks: true))
        let reference = ItemReference(path: first, identity: form, device: status.device, inode: status.inode)
        #expect(AccessPolicy.isGrantedItem(reference, item: try ResolvedItem.resolve(first)))
        // An item with an identity of its own is never matched by an inode form.
        try FilePath(first).setExtendedAttribute(named: DocumentIdentity.attribute, to: Array(UUID().uuidString.lowercased().utf8))
        #expect(!AccessPolicy.isGrantedItem(reference, item: try ResolvedItem.resolve(first)))
        try FilePath(first).removeExtendedAttribute(named: DocumentIdentity.attribute)
        // The device and inode alone (no mark: an older grant, or a file system that keeps neither) name nothing.
        let bare = ItemReference(path: first, identity: "inode-\(status.device)-\(status.inode)", device: status.device, inode: status.inode)
        #expect(!AccessPolicy.isGrantedItem(bare, item: try ResolvedItem.resolve(first)))
        #expect(!BookmarkResolver.matches(first, bare))
        #expect(BookmarkResolver.matches(first, reference))

        // Deleted, and a new file given the same inode (at once on an idle ext4; other tests
        // running beside this one may take it first: then another granted file is made and
        // deleted, up to ten times).
        var victim = (path: first, status: status, reference: reference)
        var reused: String?
        for round in 0..<10 where reused == nil {
            if round > 0 {
                let path = dir.child("granted-\(round).txt").path
                _ = FileManager.default.createFile(atPath: path, contents: Data("the user's words".utf8))
                let fresh = try FileStatus(path: FilePath(path), followSymlinks: true)
                let identity = DocumentIdentity.inodeForm(ofItemAt: path, device: fresh.device, inode: fresh.inode, followSymlinks: true)
                victim = (path, fresh, ItemReference(path: path, identity: identity, device: fresh.device, inode: fresh.inode))
            }
            #expect(unlink(victim.path) == 0)
            for attempt in 0..<500 where reused == nil {
                let name = dir.child("new-\(round)-\(attempt).txt").path
                _ = FileManager.default.createFile(atPath: name, contents: Data("someone else's words".utf8))
                if let fresh = try? FileStatus(path: FilePath(name)), fresh.inode == victim.status.inode { reused = name } else { unlink(name) }
            }
        }
        let name = try #require(reused, "no new file got a deleted one's inode back in ten tries")
        #expect(rename(name, victim.path) == 0)
        let now = try FileStatus(path: FilePath(victim.path), followSymlinks: true)
        #expect(now.device == victim.status.device && now.inode == victim.status.inode)
        #expect(DocumentIdentity.inodeForm(ofItemAt: victim.path, device: now.device, inode: now.inode, followSymlinks: true) != victim.reference.identity)
        #expect(!AccessPolicy.isGrantedItem(victim.reference, item: try ResolvedItem.resolve(victim.path)))
        #expect(!BookmarkResolver.matches(victim.path, victim.reference))
    }

    @Test func theMarkIsABirthTimeOrAGeneration() throws {
        let dir = try TemporaryDirectory("inode-mark")
        let file = dir.child("a").path
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        let mark = try #require(FileIncarnation.mark(ofItemAt: file))
        // The same file keeps its mark across writes and renames.
        try Data("more".utf8).write(to: URL(fileURLWithPath: file))
        #expect(rename(file, file + ".moved") == 0)
        #expect(FileIncarnation.mark(ofItemAt: file + ".moved") == mark)
        #expect(FileIncarnation.mark(ofItemAt: dir.child("missing").path) == nil)
        #expect(!DocumentIdentity.isValid("inode-1-2-x9") && !DocumentIdentity.isValid("inode-1-2-b" + String(repeating: "9", count: 100)))
    }
}
