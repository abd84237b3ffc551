import FolioServers
import Foundation

/// The pure-HTTP upper bound of `folio bench sync`: curl with `parallel` keep-alive connections
/// sending only the requests a transfer needs, over a tree of folders and files.
struct CurlBound {
    var curl: String
    /// The server's base URL, with its trailing slash.
    var base: String
    /// Where the request lists are written.
    var scratch: String
    var parallel: Int

    /// A local tree's folders (parents first) and files, relative to its root.
    struct Tree {
        var folders: [String] = []
        var files: [String] = []
    }

    static func tree(at root: String) throws -> Tree {
        var tree = Tree()
        guard let walker = FileManager.default.enumerator(atPath: root) else { throw BenchmarkFailure("cannot read \(root)") }
        while let relative = walker.nextObject() as? String {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isFolder)
            if isFolder.boolValue { tree.folders.append(relative) } else { tree.files.append(relative) }
        }
        tree.folders.sort { $0.split(separator: "/").count < $1.split(separator: "/").count }
        return tree
    }

    /// MKCOL each folder below `remote` (one depth at a time), then PUT each file.
    func upload(_ tree: Tree, from root: String, to remote: String) throws {
        let depths = Dictionary(grouping: tree.folders) { $0.split(separator: "/").count }
        for depth in depths.keys.sorted() {
            try run(["-X", "MKCOL"], depths[depth]!.map { [url(remote, $0 + "/"), output("/dev/null")] })
        }
        try run([], tree.files.map { [url(remote, $0), "upload-file = \(quoted(root + "/" + $0))", output("/dev/null")] })
    }

    /// GET each file below `remote` into `destination`.
    func download(_ tree: Tree, from remote: String, to destination: String) throws {
        try run(["--create-dirs"], tree.files.map { [url(remote, $0), output(destination + "/" + $0)] })
    }

    /// PROPFIND (depth 1) `remote` and each folder below it: what a pass must read to learn that nothing changed.
    func list(_ tree: Tree, at remote: String) throws {
        try run(["-X", "PROPFIND", "-H", "Depth: 1"], ([""] + tree.folders.map { $0 + "/" }).map { [url(remote, $0), output("/dev/null")] })
    }

    private func url(_ remote: String, _ relative: String) -> String { "url = \(quoted(base + remote + "/" + relative))" }
    private func output(_ path: String) -> String { "output = \(quoted(path))" }
    private func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }

    /// One curl process for `requests` (a config file's lines each), `parallel` at a time.
    private func run(_ options: [String], _ requests: [[String]]) throws {
        guard !requests.isEmpty else { return }
        let list = scratch + "/curl-requests"
        try requests.map { $0.joined(separator: "\n") }.joined(separator: "\n").write(toFile: list, atomically: false, encoding: .utf8)
        let arguments = ["-s", "-S", "--fail", "--http1.1", "--parallel", "--parallel-max", "\(parallel)"] + options + ["-K", list]
        let result = try ProcessRunner.run(URL(fileURLWithPath: curl), arguments)
        guard result.status == 0 else { throw BenchmarkFailure("curl \(options.joined(separator: " ")) failed (exit \(result.status)): \(result.stderr.suffix(500))") }
    }
}
