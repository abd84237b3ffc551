import Folio
import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench bookmarks`: bookmark creation and resolution (also after a move) and security-scope
/// start/stop pairs, each beside a same-run baseline.
enum BookmarkBenchmarks {
    static func run(iterations: Int, rounds: Int) throws {
        let key = BookmarkKey(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) })
        try BenchmarkHarness.withScratchDirectory("bookmarks") { root in
            try CoordinationEngine.$override.withValue(LocalCoordinationEngine()) {
                try BookmarkKeys.$override.withValue(key) {
                    print("in process (no daemon; the process holds the key):")
                    try run(iterations: iterations, rounds: rounds, root: root)
                }
            }
        }
        try BenchmarkHarness.withScratchDirectory("bookmarks-daemon") { root in try runThroughDaemon(iterations: iterations, rounds: rounds, root: root) }
    }

    /// The same operations by an app through a daemon that signs, resolves and checks its grant.
    private static func runThroughDaemon(iterations: Int, rounds: Int, root: String) throws {
        let daemon = try BenchmarkDaemon(root: root)
        defer { daemon.stop() }
        let app = "com.example.BookmarkBench"
        let apps = root + "/data/folio/Apps"
        try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true)
        try Data(#"{"CFBundleIdentifier": "\#(app)"}"#.utf8).write(to: URL(fileURLWithPath: apps + "/\(app).json"))
        try FileManager.default.createDirectory(atPath: root + "/docs", withIntermediateDirectories: true)
        let user = try DaemonCoordinationEngine(socketPath: daemon.socket, app: nil)
        _ = try user.send(GrantAdd(app: app, path: root + "/docs", write: true, persistent: true))
        user.disconnect()
        let engine = try DaemonCoordinationEngine(socketPath: daemon.socket, app: app)
        defer { engine.disconnect() }
        print("through the daemon, as an app with a folder grant:")
        try CoordinationEngine.$override.withValue(engine) {
            try run(iterations: iterations, rounds: rounds, root: root + "/docs", echoSocket: daemon.echoSocket)
        }
    }

    private static func run(iterations: Int, rounds: Int, root: String, echoSocket: String? = nil) throws {
        try FileManager.default.createDirectory(atPath: root + "/from", withIntermediateDirectories: true)
        // A tree of 20 folders × 50 files, so that finding a moved item means searching.
        for folder in 0..<20 {
            try FileManager.default.createDirectory(atPath: root + "/tree/f\(folder)", withIntermediateDirectories: true)
            for file in 0..<50 { _ = FileManager.default.createFile(atPath: root + "/tree/f\(folder)/n\(file).txt", contents: Data("x".utf8)) }
        }
        let path = root + "/from/document.txt"
        _ = FileManager.default.createFile(atPath: path, contents: Data("contents".utf8))
        let url = URL(fileURLWithPath: path)
        var harness = BenchmarkHarness(rounds: rounds)
        let count = min(iterations, 20_000)
        print("bookmarks: \(count) operations a round, median of \(rounds) rounds; a tree of 1,000 files for the moved case")
        var sink = 0
        let data = try url.bookmarkData()
        // Through the daemon the baseline is a raw socket round trip of a bookmark's size.
        let pingPong = try echoSocket.map { try PingPong(socket: $0, requestSize: data.base64EncodedString().utf8.count + 80) }
        let baselineName = pingPong == nil ? "stat + getxattr of the identity" : "raw Unix-socket ping-pong, same size"
        let baseline = {
            for _ in 0..<count {
                if let pingPong { pingPong.roundTrip() } else { sink &+= rawIdentity(path) }
            }
        }
        harness.rate(
            "URL.bookmarkData()", operations: count, baselineName: baselineName,
            work: { for _ in 0..<count { sink &+= (try? url.bookmarkData())?.count ?? 0 } }, baseline: baseline)
        harness.rate(
            "URL(resolvingBookmarkData:) in place", operations: count, baselineName: baselineName,
            work: {
                for _ in 0..<count {
                    var stale = false
                    sink &+= (try? URL(resolvingBookmarkData: data, options: .withoutImplicitStartAccessing, bookmarkDataIsStale: &stale))?.path.count ?? 0
                }
            },
            baseline: baseline)
        // Moved into the tree: every resolution searches for it.
        let moved = root + "/tree/f19/document.txt"
        rename(path, moved)
        let movedCount = max(1, count / 20)
        harness.rate(
            "URL(resolvingBookmarkData:) after a move", operations: movedCount, baselineName: "raw walk of the tree for the inode",
            work: {
                for _ in 0..<movedCount {
                    var stale = false
                    sink &+= (try? URL(resolvingBookmarkData: data, options: .withoutImplicitStartAccessing, bookmarkDataIsStale: &stale))?.path.count ?? 0
                }
            },
            baseline: { for _ in 0..<movedCount { sink &+= walk(root, forInodeOf: moved) } })
        var stale = false
        let scoped = try URL(resolvingBookmarkData: data, options: .withoutImplicitStartAccessing, bookmarkDataIsStale: &stale)
        let lock = NSLock()
        var counts: [String: Int] = [:]
        // An app's outermost start asks the daemon whether the grant still holds.
        harness.rate(
            "start/stopAccessingSecurityScopedResource pair", operations: count,
            baselineName: pingPong == nil ? "locked Dictionary increment + decrement" : "raw Unix-socket ping-pong, same size",
            work: {
                for _ in 0..<count {
                    if scoped.startAccessingSecurityScopedResource() { sink &+= 1 }
                    scoped.stopAccessingSecurityScopedResource()
                }
            },
            baseline: {
                for _ in 0..<count {
                    if let pingPong {
                        pingPong.roundTrip()
                    } else {
                        lock.withLock { counts[moved, default: 0] += 1 }
                        lock.withLock { counts[moved, default: 0] -= 1 }
                    }
                }
            })
        harness.report()
        if sink == 42 { print("") }
    }

    static func rawIdentity(_ path: String) -> Int {
        var status = stat()
        stat(path, &status)
        let identity = (try? FilePath(path).extendedAttribute(named: DocumentIdentity.attribute))?.count ?? 0
        return Int(status.st_ino & 1) + identity
    }

    /// Finds the inode of `target` by reading every folder under `root`.
    static func walk(_ root: String, forInodeOf target: String) -> Int {
        var status = stat()
        stat(target, &status)
        var queue = [root]
        while let directory = queue.popLast() {
            guard let stream = opendir(directory) else { continue }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let name = DirectoryRecord.name(entry)
                if name == "." || name == ".." { continue }
                if entry.pointee.d_ino == status.st_ino { return 1 }
                if entry.pointee.d_type == UInt8(DT_DIR) { queue.append(directory + "/" + name) }
            }
        }
        return 0
    }
}
