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
        try BenchmarkHarness.withScratchDirectory("bookmarks") { root in try run(iterations: iterations, rounds: rounds, root: root) }
    }

    private static func run(iterations: Int, rounds: Int, root: String) throws {
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
        harness.rate(
            "URL.bookmarkData()", operations: count, baselineName: "stat + getxattr of the identity",
            work: { for _ in 0..<count { sink &+= (try? url.bookmarkData())?.count ?? 0 } },
            baseline: { for _ in 0..<count { sink &+= rawIdentity(path) } })
        let data = try url.bookmarkData()
        harness.rate(
            "URL(resolvingBookmarkData:) in place", operations: count, baselineName: "stat + getxattr of the identity",
            work: {
                for _ in 0..<count {
                    var stale = false
                    sink &+= (try? URL(resolvingBookmarkData: data, options: .withoutImplicitStartAccessing, bookmarkDataIsStale: &stale))?.path.count ?? 0
                }
            },
            baseline: { for _ in 0..<count { sink &+= rawIdentity(path) } })
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
        harness.rate(
            "start/stopAccessingSecurityScopedResource pair", operations: count, baselineName: "locked Dictionary increment + decrement",
            work: {
                for _ in 0..<count {
                    if scoped.startAccessingSecurityScopedResource() { sink &+= 1 }
                    scoped.stopAccessingSecurityScopedResource()
                }
            },
            baseline: {
                for _ in 0..<count {
                    lock.withLock { counts[moved, default: 0] += 1 }
                    lock.withLock { counts[moved, default: 0] -= 1 }
                }
            })
        harness.report()
        if sink == 42 { print("") }
    }

    static func rawIdentity(_ path: String) -> Int {
        var status = stat()
        stat(path, &status)
        let identity = (try? FilePath(path).extendedAttribute(named: "user.folio.id"))?.count ?? 0
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
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name == "." || name == ".." { continue }
                if entry.pointee.d_ino == status.st_ino { return 1 }
                if entry.pointee.d_type == UInt8(DT_DIR) { queue.append(directory + "/" + name) }
            }
        }
        return 0
    }
}
