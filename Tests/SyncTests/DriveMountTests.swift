#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Folio
@testable import FolioSync
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import Logging
import Synchronization
import Testing

/// Whether this machine lets the tests mount a FUSE file system.
let fuseMounts = access("/dev/fuse", R_OK | W_OK) == 0 && (geteuid() == 0 || ExecutableSearch.locate("fusermount3") != nil)

/// The drive mounted with FUSE (issue 23), served by this process and used by real programs
/// (`find`, `cat`, `sha256sum`, `getfattr`, `mv`, a shell): placeholders show as their documents
/// and download on first read; writes land in the replica and a pass sends them; Folio's own names
/// stay hidden; when the mount goes, the folder is the plain replica again.
@Suite("The drive's mount", .elasticPool, .enabled(if: fuseMounts, "needs /dev/fuse, and root or fusermount3"))
struct DriveMountTests {
    static let kinds = [SyncBackend.Kind.memory, .apache].filter(\.runs)

    /// Runs a program to its end: its output, after checking it succeeded.
    @discardableResult
    func run(_ arguments: String...) throws -> String {
        let output = try ProcessRunner.run(URL(fileURLWithPath: ExecutableSearch.locate(arguments[0])!), Array(arguments.dropFirst()))
        try #require(output.status == 0, "\(arguments.joined(separator: " ")) exited \(output.status): \(output.stderr)")
        return output.stdout
    }

    /// A program's exit status.
    func status(_ arguments: String...) throws -> Int32 {
        try ProcessRunner.run(URL(fileURLWithPath: ExecutableSearch.locate(arguments[0])!), Array(arguments.dropFirst())).status
    }

    /// Device `two`'s folder mounted, its downloads made by an engine on the replica beneath.
    func mount(_ two: SyncDevice, _ backend: SyncBackend, gate: Gate? = nil, passthrough: Bool = true) throws -> (mount: DriveMount, engine: SyncEngine) {
        let provider = try backend.provider()
        let box = EngineBox()
        let mount = try DriveMount(two.root, materialize: { path, progress, arriving in
            await gate?.wait()
            _ = try await box.engine!.materialize([SyncPath(path)], progress: progress, arriving: arriving)
        }, passthrough: passthrough, logger: Logger(label: "test.mount"))
        box.engine = SyncEngine(provider: provider, replica: LocalReplica(root: mount.fileSystem.replicaPath), journal: two.journal, versions: two.versions)
        return (mount, box.engine!)
    }

    final class EngineBox: @unchecked Sendable { var engine: SyncEngine? }

    /// Holds downloads back until opened.
    final class Gate: Sendable {
        let stream: AsyncStream<Void>
        let continuation: AsyncStream<Void>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }
        func wait() async { for await _ in stream { break } }
        func open() {
            continuation.yield()
            continuation.finish()
        }
    }

    @Test(arguments: kinds)
    func programsSeeDocumentsAndReadThemOnDemand(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        let large = (0..<20_000).map { "line \($0)\n" }.joined()
        try one.write("a.txt", "hello world")
        try one.write("dir/b.txt", large)
        try await one.settle()
        let arrived = try await two.settle()
        #expect(arrived.placeholders == 2, "\(arrived)")
        let (mount, engine) = try mount(two, backend)
        defer { mount.unmount() }
        let root = two.root

        // Every program sees the documents, with their sizes, and none of Folio's own names.
        let listed = try run("find", root, "-mindepth", "1", "-printf", "%P %s %b %y\n").split(separator: "\n").map(String.init).sorted()
        #expect(listed.filter { $0.hasSuffix(" f") } == ["a.txt 11 0 f", "dir/b.txt \(large.utf8.count) 0 f"], "\(listed)")
        #expect(listed.filter { $0.hasSuffix(" d") }.map { $0.split(separator: " ")[0] } == ["dir"], "\(listed)")
        #expect(try run("getfattr", "--only-values", "-n", "user.folio.status", root + "/a.txt") == "cloud")

        // The first read downloads; the replica beneath then holds the bytes.
        #expect(try run("cat", root + "/a.txt") == "hello world")
        // Downloaded, it is served by the kernel from the replica's file where it can
        // (passthrough, kernel 6.9 and root); the first read may have been served as it arrived.
        #expect(await eventually { (try? self.run("getfattr", "--only-values", "-n", "user.folio.status", root + "/a.txt")) == "local" })
        let served = mount.fileSystem.readsServed.load(ordering: .relaxed)
        #expect(try run("cat", root + "/a.txt") == "hello world")
        let kernel = ProcessInfo.processInfo.operatingSystemVersion
        if (kernel.majorVersion, kernel.minorVersion) >= (6, 9), geteuid() == 0 {
            #expect(mount.fileSystem.passthrough && mount.fileSystem.readsServed.load(ordering: .relaxed) == served)
        }
        #expect(try run("getfattr", "--only-values", "-n", "user.folio.status", root + "/a.txt") == "local")
        let scratch = try TemporaryDirectory("folio-mount-expected")
        let expected = scratch.child("b.txt")
        try Data(large.utf8).write(to: expected)
        #expect(try run("sha256sum", root + "/dir/b.txt").prefix(64) == run("sha256sum", expected.path).prefix(64))
        // Read as it arrived, the file is placed in the replica when its download ends, which may
        // be after the reader is done.
        #expect(await eventually { mount.fileSystem.downloadsUnderWay == 0 })
        let beneath = mount.fileSystem.replicaPath
        #expect(FileManager.default.contents(atPath: beneath + "/dir/b.txt") == Data(large.utf8))
        #expect(!FileManager.default.fileExists(atPath: beneath + "/dir/b.txt.folio-cloud"))

        // One file open several times at once, reading and writing (the kernel takes one backing
        // file a file: every open shares it).
        let together = """
            import sys
            p = sys.argv[1]
            first = open(p, 'rb'); writer = open(p, 'r+b'); second = open(p, 'rb')
            writer.write(b'HELLO'); writer.flush()
            print(first.read().decode(), second.read().decode(), sep='|', end='')
            """
        #expect(try run("python3", "-c", together, root + "/a.txt") == "HELLO world|HELLO world")
        #expect(FileManager.default.contents(atPath: beneath + "/a.txt") == Data("HELLO world".utf8))
        // Appended to while open for reading elsewhere (the shared backing file is not opened to append).
        let appended = """
            import sys
            p = sys.argv[1]
            reader = open(p, 'rb')
            with open(p, 'ab') as f: f.write(b'!')
            print(reader.read().decode(), end='')
            """
        #expect(try run("python3", "-c", appended, root + "/a.txt") == "HELLO world!")
        #expect(FileManager.default.contents(atPath: beneath + "/a.txt") == Data("HELLO world!".utf8))

        // Writes land in the replica: a new file, an editor's save by rename, a removal.
        try run("sh", "-c", "echo made here > '\(root)/c.txt' && printf 'saved by an editor' > '\(root)/.a.txt.swp' && mv '\(root)/.a.txt.swp' '\(root)/a.txt'")
        #expect(FileManager.default.contents(atPath: beneath + "/c.txt") == Data("made here\n".utf8))
        #expect(FileManager.default.contents(atPath: beneath + "/a.txt") == Data("saved by an editor".utf8))
        // Folio's names cannot be made through the mount.
        #expect(try status("touch", root + "/x.folio-cloud") != 0)
        #expect(!FileManager.default.fileExists(atPath: beneath + "/x.folio-cloud"))

        // A pass on the replica beneath sends them; the other device gets them.
        let sent = try await engine.sync()
        #expect(sent.uploaded == 2, "\(sent)")
        try await one.settle()
        #expect(one.read("a.txt") == "saved by an editor" && one.read("c.txt") == "made here\n")

        // Unmounted, the folder is the plain replica again.
        #expect(mount.unmount())
        #expect(FileManager.default.contents(atPath: root + "/dir/b.txt") == Data(large.utf8))
        #expect(FileManager.default.contents(atPath: root + "/c.txt") == Data("made here\n".utf8))
    }

    @Test func aSignalEndsAWaitingOpenAndTheDownloadGoesOn() async throws {
        let backend = try SyncBackend(.memory)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        try one.write("slow.txt", "worth the wait")
        try await one.settle()
        try await two.settle()
        let gate = Gate()
        let (mount, _) = try mount(two, backend, gate: gate)
        defer { mount.unmount() }
        let file = two.root + "/slow.txt"
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: ExecutableSearch.locate("python3")!)
        reader.arguments = ["-c", """
            import signal, sys
            class Interrupted(Exception): pass
            def interrupt(*_): raise Interrupted()
            signal.signal(signal.SIGUSR1, interrupt)
            # This test process's threads block signals, and a spawned child inherits the mask.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])
            try:
                open(sys.argv[1]).read()
                print("read")
            except Interrupted:
                print("interrupted")
                sys.exit(3)
            """, file]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        // The reader waits in its open, for the download.
        #expect(await eventually { mount.fileSystem.waitingOpens == 1 })
        #expect(try run("getfattr", "--only-values", "-n", "user.folio.status", file) == "downloading")
        #expect(try run("getfattr", "--only-values", "-n", "user.folio.progress", file) == "0")
        kill(reader.processIdentifier, SIGUSR1)
        let ended = await eventually(2) { !reader.isRunning }
        if !ended { kill(reader.processIdentifier, SIGKILL) }
        try #require(ended, "the signalled reader still waits")
        #expect(reader.terminationStatus == 3)
        #expect(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "interrupted\n")
        #expect(mount.fileSystem.waitingOpens == 0)
        // The download goes on without it, to its end: its bytes placed, and then its notes (the
        // status shows it downloading until both are done).
        gate.open()
        #expect(await eventually { mount.fileSystem.downloadsUnderWay == 0 })
        let beneath = mount.fileSystem.replicaPath + "/slow.txt"
        #expect(FileManager.default.contents(atPath: beneath) == Data("worth the wait".utf8))
        #expect(try run("cat", file) == "worth the wait")
        #expect(try run("getfattr", "--only-values", "-n", "user.folio.status", file) == "local")
    }

    /// Without passthrough (a kernel before 6.9, a user without CAP_SYS_ADMIN) reads and writes go
    /// through the mount's threads: whole files, a part at an offset, a write in the middle, a
    /// truncation, an append.
    @Test func readsAndWritesWithoutPassthrough() async throws {
        let backend = try SyncBackend(.memory)
        let one = try await backend.device("one"), two = try await backend.device("two", keepsEverything: false)
        let large = (0..<50_000).map { "row \($0)\n" }.joined()
        try one.write("big.txt", large)
        try await one.settle()
        try await two.settle()
        let (mount, _) = try mount(two, backend, passthrough: false)
        defer { mount.unmount() }
        let file = two.root + "/big.txt"
        let scratch = try TemporaryDirectory("folio-mount-expected")
        let expected = scratch.child("big.txt")
        try Data(large.utf8).write(to: expected)
        #expect(try run("sha256sum", file).prefix(64) == run("sha256sum", expected.path).prefix(64))
        #expect(!mount.fileSystem.passthrough && mount.fileSystem.readsServed.load(ordering: .relaxed) > 0)
        #expect(try run("dd", "if=\(file)", "bs=1", "skip=100000", "count=9", "status=none") == String(large.utf8.dropFirst(100_000).prefix(9))!)
        try run("sh", "-c", "printf XYZ | dd of='\(file)' bs=1 seek=10 conv=notrunc status=none && truncate -s 20 '\(file)' && printf 'end' >> '\(file)'")
        var edited = Array(large.utf8.prefix(20))
        edited.replaceSubrange(10..<13, with: Array("XYZ".utf8))
        let beneath = mount.fileSystem.replicaPath + "/big.txt"
        #expect(FileManager.default.contents(atPath: beneath) == Data(edited + Array("end".utf8)))
        #expect(try run("cat", file) == String(decoding: edited + Array("end".utf8), as: UTF8.self))
    }

    /// Real programs on a tree of 10,000 files of which one in ten is downloaded (the replica
    /// written as the engine leaves it: a file, or a stub in its place): `find` sees every file
    /// with its size, `du` counts only what is here; `sqlite3` keeps a database in the drive
    /// (rollback journal, then WAL).
    @Test func findDuAndSqliteOnTheMount() async throws {
        let home = try TemporaryDirectory("folio-mount-tree")
        let root = home.child("Drive").path
        let content = Data(String(repeating: "x", count: 5000).utf8)
        for folder in 0..<20 {
            try FileManager.default.createDirectory(atPath: root + "/tree/f\(folder)", withIntermediateDirectories: true)
            for index in folder * 500..<(folder + 1) * 500 {
                let path = root + "/tree/f\(folder)/file\(index).txt"
                if index % 10 == 0 {
                    try content.write(to: URL(fileURLWithPath: path))
                } else {
                    let stub = PlaceholderStub(name: "file\(index).txt", size: Int64(content.count), modified: 1_790_000_000, contentType: "public.plain-text")
                    try stub.encoded().write(to: URL(fileURLWithPath: path + PlaceholderStub.suffix))
                }
            }
        }
        let mount = try DriveMount(root, materialize: { _, _, _ in throw CocoaError(.fileReadUnknown) }, logger: Logger(label: "test.mount"))
        defer { mount.unmount() }
        let files = try run("find", root + "/tree", "-type", "f", "-printf", "%s %b\n").split(separator: "\n")
        #expect(files.count == 10_000 && files.allSatisfy { $0.hasPrefix("5000 ") })
        #expect(files.filter { !$0.hasSuffix(" 0") }.count == 1000, "only the downloaded files take blocks")
        let used = Int(try run("du", "-s", "-B1", root + "/tree").split(separator: "\t")[0])!
        let apparent = Int(try run("du", "-s", "-B1", "--apparent-size", root + "/tree").split(separator: "\t")[0])!
        #expect(apparent >= 10_000 * 5000 && used < 10_000 * 5000 / 4, "\(used) of \(apparent)")

        let database = root + "/notes.sqlite"
        try run("sqlite3", database, "create table notes(text); insert into notes values ('first'); insert into notes values ('second');")
        #expect(try run("sqlite3", database, "select count(*) from notes;") == "2\n")
        try run("sqlite3", database, "pragma journal_mode=wal; insert into notes values ('third');")
        #expect(try run("sqlite3", database, "select text from notes order by rowid desc limit 1;") == "third\n")
        #expect(try run("sqlite3", database, "pragma integrity_check;") == "ok\n")
    }
}
