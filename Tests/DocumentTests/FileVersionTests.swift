@testable import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

/// A private version store and a folder for one test.
struct VersionWorld {
    let directory: TemporaryDirectory
    let store: VersionStore

    init(limits: VersionStore.Limits = .init()) throws {
        directory = try TemporaryDirectory("versions")
        store = VersionStore(directory: directory.path + "/store", limits: limits)
    }

    func file(_ name: String, _ text: String) throws -> URL {
        let url = URL(fileURLWithPath: directory.path + "/" + name)
        try Data(text.utf8).write(to: url)
        return url
    }

    func run<T>(_ body: () throws -> T) rethrows -> T {
        try VersionStore.$override.withValue(store) { try body() }
    }
}

@Suite("FileVersion and the version store", .elasticPool)
struct FileVersionTests {
    @Test func versionsAreStoredOnceAndFollowRenames() throws {
        let world = try VersionWorld()
        try world.run {
            let url = try world.file("essay.txt", "first")
            let first = try FileVersion.addOfItem(at: url, withContentsOf: url)
            #expect(try FileVersion.addOfItem(at: url, withContentsOf: url) == first, "identical contents are kept once")
            try Data("second".utf8).write(to: url)
            let second = try FileVersion.addOfItem(at: url, withContentsOf: url)
            #expect(first != second)
            let objects = try FileManager.default.subpathsOfDirectory(atPath: world.store.objectsDirectory)
                .filter { $0.count > 10 && !$0.hasPrefix("tmp") }
            #expect(objects.count == 2)

            let moved = URL(fileURLWithPath: world.directory.path + "/renamed.txt")
            try FileManager.default.moveItem(at: url, to: moved)
            let others = try #require(FileVersion.otherVersionsOfItem(at: moved))
            #expect(others.map(\.identifier) == [first.identifier, second.identifier])
            #expect(try String(contentsOf: others[0].url, encoding: .utf8) == "first")
            #expect(others[0].localizedName == "essay.txt")
            #expect(others[0].localizedNameOfSavingComputer?.isEmpty == false)
            let found = FileVersion.version(itemAt: moved, forPersistentIdentifier: first.persistentIdentifier)
            #expect(found == first)
            // Archived and read back, as Apple's samples keep it.
            let archived = try NSKeyedArchiver.archivedData(withRootObject: first.persistentIdentifier, requiringSecureCoding: true)
            let unarchived = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSString.self, from: archived))
            #expect(FileVersion.version(itemAt: moved, forPersistentIdentifier: unarchived) == first)
            #expect(first.isDiscardable && !first.hasThumbnail && first.originatorNameComponents == nil)
            let current = try #require(FileVersion.currentVersionOfItem(at: moved))
            #expect(current.url.path == moved.path)
            #expect(FileVersion.version(itemAt: moved, forPersistentIdentifier: current.persistentIdentifier) == current)
            #expect(FileVersion.currentVersionOfItem(at: URL(fileURLWithPath: world.directory.path + "/none")) == nil)
            #expect(FileVersion.otherVersionsOfItem(at: URL(fileURLWithPath: world.directory.path + "/none")) == nil)
        }
    }

    /// Versions on other devices: none, Folio keeps them all here; the handler is called once.
    @Test func nonlocalVersionsAreNone() async {
        let url = URL(fileURLWithPath: "/tmp/any-document.txt")
        let nonlocal = await withCheckedContinuation { done in
            FileVersion.getNonlocalVersionsOfItem(at: url) { versions, error in done.resume(returning: (versions?.count, error == nil)) }
        }
        #expect(nonlocal == (0, true))
    }

    @Test func conflictsResolveAndVersionsGo() throws {
        let world = try VersionWorld()
        try world.run {
            let url = try world.file("plan.txt", "mine")
            try world.store.addVersion(ofItemAt: url.path, data: Data("theirs".utf8), kind: .conflict, isConflict: true)
            let conflicts = try #require(FileVersion.unresolvedConflictVersionsOfItem(at: url))
            #expect(conflicts.count == 1 && conflicts[0].isConflict && !conflicts[0].isResolved)
            // An unresolved conflict is not discardable until an app says so.
            #expect(!conflicts[0].isDiscardable)
            conflicts[0].isDiscardable = true
            #expect(conflicts[0].isDiscardable)
            // The canonical flow: pick the winner, remove the others, mark resolved.
            try conflicts[0].replaceItem(at: url)
            #expect(try String(contentsOf: url, encoding: .utf8) == "theirs")
            conflicts[0].isResolved = true
            #expect(FileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty == true)
            try FileVersion.removeOtherVersionsOfItem(at: url)
            #expect(FileVersion.otherVersionsOfItem(at: url)?.isEmpty == true)
            #expect(throws: CocoaError.self) { try FileVersion.currentVersionOfItem(at: url)!.remove() }
        }
    }

    @Test func replacingKeepsIdentityAndModeAndByMovingRemoves() throws {
        let world = try VersionWorld()
        try world.run {
            let url = try world.file("report.txt", "v1")
            chmod(url.path, 0o640)
            try FilePath(url.path).setExtendedAttribute(named: "user.xdg.tags", to: Array("work".utf8))
            let v1 = try FileVersion.addOfItem(at: url, withContentsOf: url)
            let identity = try DocumentIdentity.identifier(ofItemAt: url.path, creating: false)
            try Data("v2".utf8).write(to: url)
            try v1.replaceItem(at: url, options: .byMoving)
            #expect(try String(contentsOf: url, encoding: .utf8) == "v1")
            #expect(try DocumentIdentity.identifier(ofItemAt: url.path, creating: false) == identity)
            #expect(try FilePath(url.path).extendedAttribute(named: "user.xdg.tags") == Array("work".utf8))
            #expect(try FileStatus(path: FilePath(url.path)).mode == 0o640)
            #expect(FileVersion.otherVersionsOfItem(at: url)?.isEmpty == true)
        }
    }

    @Test func damagedStoreEntriesAreDetected() throws {
        let world = try VersionWorld()
        try world.run {
            let url = try world.file("notes.txt", "precious")
            let version = try FileVersion.addOfItem(at: url, withContentsOf: url)
            try Data("changed".utf8).write(to: url)
            // A damaged object: replacing refuses and leaves the item alone.
            let object = version.url.path
            chmod(object, 0o600)
            try Data("tampered".utf8).write(to: URL(fileURLWithPath: object))
            #expect { try version.replaceItem(at: url) } throws: { ($0 as? CocoaError)?.code == .fileReadCorruptFile }
            #expect(try String(contentsOf: url, encoding: .utf8) == "changed")
            // A damaged manifest: reported, moved aside, not silently emptied.
            let identity = try DocumentIdentity.identifier(ofItemAt: url.path, creating: false)
            let manifest = world.store.manifestPath(identity)
            try Data("{ not json".utf8).write(to: URL(fileURLWithPath: manifest))
            #expect { try FileVersion.versions(ofItemAt: url) } throws: { ($0 as? CocoaError)?.code == .fileReadCorruptFile }
            let aside = try FileManager.default.contentsOfDirectory(atPath: world.store.itemsDirectory).filter { $0.contains(".corrupt-") }
            #expect(aside.count == 1)
        }
    }

    @Test func hostileIdentityAttributesAreIgnored() throws {
        let world = try VersionWorld()
        let url = try world.file("x.txt", "x")
        try FilePath(url.path).setExtendedAttribute(named: DocumentIdentity.attribute, to: Array("../../../etc/passwd".utf8))
        let identity = try DocumentIdentity.identifier(ofItemAt: url.path, creating: false)
        #expect(identity.hasPrefix("inode-"))
        #expect(!DocumentIdentity.isValid("../x") && !DocumentIdentity.isValid("inode-1/2"))
        #expect(try DocumentIdentity.identifier(ofItemAt: url.path, creating: true).count == 36)
    }

    @Test func retentionKeepsTheNewestAndEveryUnresolvedConflict() throws {
        var limits = VersionStore.Limits()
        limits.maximumVersions = 3
        let world = try VersionWorld(limits: limits)
        try world.run {
            let url = try world.file("log.txt", "0")
            try world.store.addVersion(ofItemAt: url.path, data: Data("conflict".utf8), kind: .conflict, isConflict: true)
            for round in 1...6 {
                try world.store.addVersion(ofItemAt: url.path, data: Data("v\(round)".utf8), kind: .saved)
            }
            let versions = try FileVersion.versions(ofItemAt: url)
            #expect(versions.filter { !$0.isConflict }.count == 3)
            #expect(versions.filter(\.isConflict).count == 1)
            #expect(try versions.filter { !$0.isConflict }.map { try String(contentsOf: $0.url, encoding: .utf8) } == ["v4", "v5", "v6"])
        }
    }

    /// A copy made with its attributes (`cp -a`) carries the identity attribute, but it is a new
    /// document: it inherits no versions, adds none to the original's, and is given an identity of
    /// its own; the original keeps its versions across a save by rename, and once the original is
    /// gone, the same bytes on a new inode (a download, a move across file systems) are the document.
    @Test func aCopyInheritsNoVersions() throws {
        let world = try VersionWorld()
        try world.run {
            let url = try world.file("essay.txt", "first")
            let first = try FileVersion.addOfItem(at: url, withContentsOf: url)
            try Data("second".utf8).write(to: url)
            _ = try FileVersion.addOfItem(at: url, withContentsOf: url)
            let copy = URL(fileURLWithPath: world.directory.path + "/essay (copy).txt")
            let copied = try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", url.path, copy.path])
            #expect(copied.status == 0)
            #expect(try FilePath(copy.path).extendedAttribute(named: "user.folio.id") == FilePath(url.path).extendedAttribute(named: "user.folio.id"))

            #expect(FileVersion.otherVersionsOfItem(at: copy)?.count == 0, "a copy inherits no versions")
            try Data("the copy's own".utf8).write(to: copy)
            _ = try FileVersion.addOfItem(at: copy, withContentsOf: copy)
            #expect(FileVersion.otherVersionsOfItem(at: copy)?.count == 1)
            #expect(FileVersion.otherVersionsOfItem(at: url)?.count == 2, "the copy added nothing to the original's versions")
            #expect(try FilePath(copy.path).extendedAttribute(named: "user.folio.id") != FilePath(url.path).extendedAttribute(named: "user.folio.id"))

            // A save by rename (a new inode with the identity copied over) is the same document.
            try SafeSave.write(Data("third".utf8), to: url.path, preservingAttributesOf: url.path)
            #expect(FileVersion.otherVersionsOfItem(at: url)?.map(\.identifier).first == first.identifier)

            // A second copy, then the original removed: the copy is now the document.
            let survivor = URL(fileURLWithPath: world.directory.path + "/moved.txt")
            #expect(try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", url.path, survivor.path]).status == 0)
            try FileManager.default.removeItem(at: url)
            #expect(FileVersion.otherVersionsOfItem(at: survivor)?.count == 2)
        }
    }

    @Test func settingIsResolvedToFalseIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("folio-exit-\(getpid())")
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let store = VersionStore(directory: directory.path + "/store")
            let file = directory.appendingPathComponent("f.txt")
            try? Data("x".utf8).write(to: file)
            let (identity, record) = try! store.addVersion(ofItemAt: file.path, data: Data("y".utf8), kind: .conflict, isConflict: true)
            let version = FileVersion(store: store, identity: identity, itemPath: file.path, record: record)
            version.isResolved = false
        }
    }
}

@Suite("Version store: size cap and collection", .elasticPool)
struct VersionCollectionTests {
    @Test func theSizeCapDropsTheOldestButNeverAnUnresolvedConflict() throws {
        var limits = VersionStore.Limits()
        limits.maximumBytes = 10_000
        let world = try VersionWorld(limits: limits)
        let a = try world.file("a.txt", "a"), b = try world.file("b.txt", "b")
        try world.store.addVersion(ofItemAt: a.path, data: Data(repeating: 1, count: 6000), kind: .conflict, isConflict: true)
        for round in 0..<4 {
            try world.store.addVersion(ofItemAt: (round.isMultiple(of: 2) ? a : b).path, data: Data(repeating: UInt8(10 + round), count: 3000), kind: .saved)
        }
        let report = try world.store.collectGarbage(grace: 0)
        #expect(report.bytesKept <= 10_000)
        #expect(report.versionsDropped == 3)
        #expect(report.objectsRemoved == 3)
        let kept = try world.store.versions(ofItemAt: a.path).records + world.store.versions(ofItemAt: b.path).records
        #expect(kept.contains { $0.isConflict }, "the unresolved conflict stays")
        #expect(kept.filter { !$0.isConflict }.map(\.size) == [3000], "the newest version stays")
        let objects = try FileManager.default.subpathsOfDirectory(atPath: world.store.objectsDirectory).filter { $0.count > 60 }
        #expect(objects.count == 2)
    }

    /// Contents left from a version removed long ago, stored again by a version being added right
    /// now (before its manifest names them), survive a collection that runs in between.
    @Test func contentsSharedWithAVersionBeingAddedSurviveACollection() throws {
        let world = try VersionWorld()
        let hash = try world.store.storeObject(Data("again".utf8))
        var old = [timeval(tv_sec: 1_700_000_000, tv_usec: 0), timeval(tv_sec: 1_700_000_000, tv_usec: 0)]
        #expect(utimes(world.store.objectPath(hash), &old) == 0)
        #expect(try world.store.storeObject(Data("again".utf8)) == hash)
        let report = try world.store.collectGarbage()
        #expect(report.objectsRemoved == 0)
        #expect(try world.store.readObject(hash) == Data("again".utf8))

        #expect(utimes(world.store.objectPath(hash), &old) == 0)
        #expect(try world.store.collectGarbage().objectsRemoved == 1, "unreferenced and old, nothing stored it again")
        #expect(throws: CocoaError.self) { try world.store.readObject(hash) }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: world.store.objectsDirectory + "/tmp")
        #expect(leftovers.isEmpty)
    }
}
