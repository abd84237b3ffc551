import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The isolation layer's refusals, each checked to change nothing, and its grants' lifetime.
@Suite("Isolation: containers, grants, bookmarks through the daemon", .serialized, .elasticPool)
struct IsolationTests {
    let alpha = IsolationFixture.alpha
    let beta = IsolationFixture.beta
    let denied = Int64(EACCES)

    private func text(_ url: URL) -> String? { try? String(contentsOf: url, encoding: .utf8) }

    /// App A cannot read or write app B's container through the daemon — directly, by `..`, by a
    /// symbolic link or a hard link planted in its own container — nor bookmark B's files, nor
    /// reach system files by absolute path; its own container stays open to it.
    @Test func containersAreClosedToOtherApps() throws {
        let world = try IsolationFixture("isolation-containers")
        let secret = world.container(beta).documentsURL.appendingPathComponent("secret.txt")
        try Data("beta's secret".utf8).write(to: secret)
        let own = world.container(alpha).documentsURL
        let mine = own.appendingPathComponent("mine.txt")
        try Data("alpha's".utf8).write(to: mine)
        try FileManager.default.createSymbolicLink(atPath: own.path + "/link.txt", withDestinationPath: secret.path)
        try FileManager.default.createSymbolicLink(atPath: own.path + "/beta", withDestinationPath: world.container(beta).url.path)
        #expect(link(secret.path, own.path + "/hard.txt") == 0)

        let ways = [
            secret.path, own.path + "/../../\(beta)/Documents/secret.txt", own.path + "/link.txt", own.path + "/beta/Documents/secret.txt",
            own.path + "/hard.txt",
        ]
        for path in ways {
            let read = try world.app(alpha, ["read", path])
            #expect(read["ok"]?.boolValue == false && read["posix"]?.intValue == denied, "read \(path): \(read)")
            let write = try world.app(alpha, ["write", path, "overwritten"])
            #expect(write["ok"]?.boolValue == false && write["posix"]?.intValue == denied, "write \(path): \(write)")
            let bookmark = try world.app(alpha, ["bookmark", path])
            #expect(bookmark["ok"]?.boolValue == false, "bookmark \(path): \(bookmark)")
        }
        #expect(text(secret) == "beta's secret")
        let system = try world.app(alpha, ["read", "/etc/hostname"])
        #expect(system["ok"]?.boolValue == false && system["posix"]?.intValue == denied, "\(system)")
        let creating = try world.app(alpha, ["write", world.container(beta).documentsURL.path + "/planted.txt", "x"])
        #expect(creating["ok"]?.boolValue == false && !FileManager.default.fileExists(atPath: world.container(beta).documentsURL.path + "/planted.txt"))

        #expect(try world.app(alpha, ["read", mine.path])["text"]?.stringValue == "alpha's")
        // Its own container needs no scope: start returns false, and the file stays readable.
        #expect(try world.app(alpha, ["start", mine.path])["started"]?.boolValue == false)
        #expect(try world.app(alpha, ["check", own.path + "/new/folder/file.txt", "--write"])["allowed"]?.boolValue == true)
        #expect(try world.app(alpha, ["write", own.path + "/new.txt", "fresh"])["ok"]?.boolValue == true)
        // While another name of it exists, even its own app reaches the file only through a grant.
        #expect(try world.app(beta, ["read", secret.path])["posix"]?.intValue == denied)
        #expect(unlink(own.path + "/hard.txt") == 0)
        #expect(try world.app(beta, ["read", secret.path])["text"]?.stringValue == "beta's secret")
        // The user's own tools (no app) reach everything the user can.
        #expect(try world.app(nil, ["read", secret.path])["text"]?.stringValue == "beta's secret")
    }

    /// A folder grant reaches what is inside the folder — not what a symbolic link, a hard link or
    /// `..` inside it leads to — and a read-only folder grant refuses writes.
    @Test func grantedFoldersDoNotLeak() throws {
        let world = try IsolationFixture("isolation-folders")
        let shared = world.dir.child("home/Shared")
        let inside = try world.dir.write("home/Shared/inside.txt", "shared")
        let outside = try world.dir.write("home/Private/outside.txt", "private")
        try FileManager.default.createSymbolicLink(atPath: shared.path + "/link.txt", withDestinationPath: outside.path)
        #expect(link(outside.path, shared.path + "/hard.txt") == 0)
        let added = try world.folio(["grants", "add", "--app", alpha, shared.path])
        #expect(added.status == 0, "\(added.stderr)")

        #expect(try world.app(alpha, ["read", inside.path])["text"]?.stringValue == "shared")
        for path in [shared.path + "/link.txt", shared.path + "/hard.txt", shared.path + "/../Private/outside.txt", outside.path] {
            let read = try world.app(alpha, ["read", path])
            #expect(read["ok"]?.boolValue == false && read["posix"]?.intValue == denied, "read \(path): \(read)")
        }
        let write = try world.app(alpha, ["write", inside.path, "changed"])
        #expect(write["ok"]?.boolValue == false && write["posix"]?.intValue == denied, "\(write)")
        #expect(text(inside) == "shared" && text(outside) == "private")
        // Items added to the folder later are covered too.
        let later = try world.dir.write("home/Shared/later.txt", "new")
        #expect(try world.app(alpha, ["read", later.path])["text"]?.stringValue == "new")
    }

    /// Revoking takes effect at once: coordinated access and bookmark resolution are refused.
    @Test func revokedGrantsStopAtOnce() throws {
        let world = try IsolationFixture("isolation-revoke")
        let document = try world.dir.write("home/plan.txt", "v1")
        #expect(try world.folio(["grants", "add", "--app", alpha, "--write", document.path]).status == 0)
        #expect(try world.app(alpha, ["read", document.path])["text"]?.stringValue == "v1")
        let bookmark = try #require(try world.app(alpha, ["bookmark", document.path])["data"]?.stringValue)

        let listed = try world.folio(["grants", "list", "--app", alpha])
        #expect(listed.stdout.contains("plan.txt") && listed.stdout.contains("read-write"), "\(listed.stdout)")
        // A table a person reads: a header, then one row a grant.
        let rows = listed.stdout.split(separator: "\n")
        #expect(rows.count == 2 && rows[0].split(separator: " ").first == "GRANT" && rows[1].hasSuffix("/plan.txt"), "\(listed.stdout)")
        let revoked = try world.folio(["grants", "revoke", "--app", alpha, document.path])
        #expect(revoked.status == 0, "\(revoked.stderr)")

        let read = try world.app(alpha, ["read", document.path])
        #expect(read["ok"]?.boolValue == false && read["posix"]?.intValue == denied, "\(read)")
        let write = try world.app(alpha, ["write", document.path, "v2"])
        #expect(write["ok"]?.boolValue == false && text(document) == "v1")
        let resolved = try world.app(alpha, ["resolve", bookmark])
        #expect(resolved["ok"]?.boolValue == false && resolved["code"]?.intValue == Int64(CocoaError.fileReadNoPermission.rawValue), "\(resolved)")
        #expect(try world.folio(["grants", "list", "--app", alpha]).stdout.contains("no grants"))
    }

    /// §9 34 through the daemon: a deleted target fails with `fileNoSuchFile`; the values stored at
    /// creation stay readable.
    @Test func deletedTargetsThroughTheDaemon() throws {
        let world = try IsolationFixture("isolation-deleted")
        let document = world.container(alpha).documentsURL.appendingPathComponent("gone.txt")
        try Data("12345".utf8).write(to: document)
        let bookmark = try #require(try world.app(alpha, ["bookmark", document.path])["data"]?.stringValue)
        try FileManager.default.removeItem(at: document)
        let resolved = try world.app(alpha, ["resolve", bookmark])
        #expect(resolved["code"]?.intValue == Int64(CocoaError.fileNoSuchFile.rawValue), "\(resolved)")
        let values = try world.app(alpha, ["values", bookmark])
        #expect(values["size"]?.intValue == 5 && values["name"]?.stringValue == "gone.txt", "\(values)")
    }

    /// Forged, truncated and edited bookmarks are refused (and change nothing).
    @Test func forgedBookmarksAreRefused() throws {
        let world = try IsolationFixture("isolation-forged")
        let document = world.container(alpha).documentsURL.appendingPathComponent("mine.txt")
        try Data("mine".utf8).write(to: document)
        let encoded = try #require(try world.app(alpha, ["bookmark", document.path])["data"]?.stringValue)
        let good = try #require(Data(base64Encoded: encoded))
        #expect(try world.app(alpha, ["resolve", good.base64EncodedString()])["path"]?.stringValue == document.path)

        var edited = good
        let pathStart = try #require(edited.range(of: Data("mine.txt".utf8)))
        edited[pathStart.lowerBound] = UInt8(ascii: "M")
        let foreign = try BookmarkService.make(
            path: document.path, options: 0, keys: nil, base: nil, key: BookmarkKey(bytes: Array(repeating: 9, count: 32)))
        for (name, data) in [("edited", edited), ("truncated", good.prefix(good.count - 5)), ("forged", foreign), ("garbage", Data("FBK1xxxx".utf8))] {
            let result = try world.app(alpha, ["resolve", data.base64EncodedString()])
            #expect(
                result["ok"]?.boolValue == false && result["code"]?.intValue == Int64(CocoaError.fileReadCorruptFile.rawValue),
                "\(name): \(result)")
        }
        #expect(text(document) == "mine")
    }

    /// A grant survives a daemon restart and a rename of its document done outside Folio; a
    /// session grant does not survive the restart.
    @Test func grantsSurviveRestartAndOutsideRenames() throws {
        let world = try IsolationFixture("isolation-restart")
        let document = try world.dir.write("home/Projects/thesis.txt", "chapter 1")
        let session = try world.dir.write("home/Projects/scratch.txt", "scratch")
        #expect(try world.folio(["grants", "add", "--app", alpha, "--write", document.path]).status == 0)
        #expect(try world.folio(["grants", "add", "--app", alpha, "--session", session.path]).status == 0)
        try world.restartDaemon()

        let moved = world.dir.child("home/Archive/thesis-final.txt")
        try FileManager.default.createDirectory(at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        #expect(rename(document.path, moved.path) == 0)
        #expect(try world.app(alpha, ["read", moved.path])["text"]?.stringValue == "chapter 1")
        #expect(try world.app(alpha, ["write", moved.path, "chapter 2"])["ok"]?.boolValue == true)
        #expect(text(moved) == "chapter 2")
        let listed = try world.folio(["grants", "list", "--json"])
        #expect(listed.stdout.contains("thesis-final.txt") && !listed.stdout.contains("scratch.txt"), "\(listed.stdout)")
        let gone = try world.app(alpha, ["read", session.path])
        #expect(gone["ok"]?.boolValue == false, "\(gone)")
    }

    /// A picked document, bookmarked, is reachable again from the next launch (§4.2's state
    /// restoration): bookmarking keeps the picker's grant.
    @Test func bookmarkingAPickedDocumentKeepsItsGrant() throws {
        let world = try IsolationFixture("isolation-bookmark-keeps")
        let original = try world.dir.write("home/letter.txt", "dear")
        let picker = try world.scriptedPicker([[original.path]])
        let picked = try world.app(alpha, ["pick", "open", "--bookmark"])
        _ = picker.stop()
        let bookmark = try #require(picked["urls"]?.arrayValue?.first?["bookmark"]?.stringValue, "\(picked)")
        try world.restartDaemon()
        let renamed = world.dir.child("home/letter-signed.txt")
        #expect(rename(original.path, renamed.path) == 0)
        let resolved = try world.app(alpha, ["resolve", bookmark, "--write", "dear friend"])
        #expect(resolved["path"]?.stringValue == renamed.path && resolved["stale"]?.boolValue == true, "\(resolved)")
        #expect(resolved["text"]?.stringValue == "dear" && resolved["wrote"]?.boolValue == true)
        #expect(text(renamed) == "dear friend")
        // The other app resolving the same data gets nothing.
        let stolen = try world.app(beta, ["resolve", bookmark])
        #expect(stolen["ok"]?.boolValue == false && stolen["code"]?.intValue == Int64(CocoaError.fileReadNoPermission.rawValue), "\(stolen)")
    }

    /// §9 36 through the daemon: a bookmark made with `.securityScopeAllowOnlyReadAccess`, resolved
    /// and started, reads and refuses writes with EACCES.
    @Test func readOnlyBookmarksRefuseWrites() throws {
        let world = try IsolationFixture("isolation-read-only")
        let document = try world.dir.write("home/contract.txt", "signed")
        #expect(try world.folio(["grants", "add", "--app", alpha, "--write", document.path]).status == 0)
        let bookmark = try #require(try world.app(alpha, ["bookmark", document.path, "--read-only"])["data"]?.stringValue)
        let resolved = try world.app(alpha, ["resolve", bookmark, "--write", "forged"])
        #expect(resolved["text"]?.stringValue == "signed", "\(resolved)")
        #expect(resolved["wrote"]?.boolValue == false)
        #expect(resolved["writeError"]?["code"]?.intValue == Int64(CocoaError.fileWriteNoPermission.rawValue))
        #expect(resolved["writeError"]?["posix"]?.intValue == denied)
        #expect(text(document) == "signed")
    }

    /// Related items (`NSIsRelatedItemType`): a grant to `movie.txt` covers `movie.srt` next to it
    /// (Alpha declares `.srt` related), not other names nor other folders.
    @Test func relatedItemsFollowTheirDocument() throws {
        let world = try IsolationFixture("isolation-related")
        let movie = try world.dir.write("home/Films/movie.txt", "script")
        let subtitles = try world.dir.write("home/Films/movie.srt", "1\n00:00 hello")
        let other = try world.dir.write("home/Films/other.srt", "other")
        let elsewhere = try world.dir.write("home/Elsewhere/movie.srt", "elsewhere")
        #expect(try world.folio(["grants", "add", "--app", alpha, "--write", movie.path]).status == 0)
        #expect(try world.app(alpha, ["read", subtitles.path])["ok"]?.boolValue == true)
        #expect(try world.app(alpha, ["write", world.dir.path + "/home/Films/movie.srt", "2\n00:01 bye"])["ok"]?.boolValue == true)
        for path in [other.path, elsewhere.path] {
            #expect(try world.app(alpha, ["read", path])["posix"]?.intValue == denied, "\(path)")
        }
        // Beta declares the same related type but holds no grant to the movie.
        #expect(try world.app(beta, ["read", subtitles.path])["posix"]?.intValue == denied)
    }

    /// A process of another user is refused on the socket, even when the socket's permissions
    /// would let it connect.
    @Test func anotherUserIsRefusedOnTheSocket() throws {
        guard getuid() == 0, let setpriv = ProcessRunner.which("setpriv") else {
            print("skipped: needs root and setpriv to act as another user")
            return
        }
        let world = try IsolationFixture("isolation-uid")
        // Open every folder on the way, and the socket, to everyone: only SO_PEERCRED is left.
        var folder = world.environment["XDG_RUNTIME_DIR"]! + "/folio"
        while folder != "/" && !folder.isEmpty {
            _ = chmod(folder, 0o777)
            folder = (folder as NSString).deletingLastPathComponent
        }
        _ = chmod(FolioPaths(environment: world.environment).socketPath, 0o777)
        let output = try ProcessRunner.run(
            URL(fileURLWithPath: setpriv), ["--reuid=65534", "--regid=65534", "--clear-groups", ProcessRunner.folioExecutable().path, "status"],
            environment: world.environment)
        #expect(output.status != 0)
        #expect(world.daemon.logs("refused a peer of another user"), "\(output.stderr) \(world.daemon.log)")
    }
}
