import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Attacks on the page's gate, over raw HTTP to a real daemon: no token, a wrong token, a foreign
/// `Host` (DNS rebinding), cross-origin changes, and path traversal in every parameter. Each is
/// refused, and nothing on disk changes.
@Suite("Attacks: the browser page", .serialized, .elasticPool)
struct WebGateTests {
    final class Target: @unchecked Sendable {
        let rig: BrowserRig
        let cookie: String
        let outside: String
        var documents: String { rig.home + "/Documents" }

        init() throws {
            let outsideDirectory = try TemporaryDirectory("web-outside")
            outside = outsideDirectory.path
            try Data("secret".utf8).write(to: URL(fileURLWithPath: outside + "/secret.txt"))
            rig = try BrowserRig("gate") { home in
                try Data("mine".utf8).write(to: URL(fileURLWithPath: home + "/Documents/mine.txt"))
                // A link inside the home folder that leads out of it.
                try FileManager.default.createSymbolicLink(atPath: home + "/Documents/escape", withDestinationPath: outsideDirectory.path)
            }
            cookie = "folio-\(rig.port)=\(rig.token)"
            keep = outsideDirectory
        }
        private var keep: TemporaryDirectory?

        func get(_ path: String, headers: [String: String] = [:]) throws -> LoopbackHTTP.Response {
            try LoopbackHTTP.request(port: rig.port, method: "GET", path: path, headers: ["Cookie": cookie].merging(headers) { $1 })
        }

        func post(_ path: String, _ body: [String: Any], headers: [String: String] = [:]) throws -> LoopbackHTTP.Response {
            let standard = ["Cookie": cookie, "Origin": "http://127.0.0.1:\(rig.port)", "Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"]
            return try LoopbackHTTP.request(
                port: rig.port, method: "POST", path: path, headers: standard.merging(headers) { $1 }, body: try JSONSerialization.data(withJSONObject: body))
        }

        /// Everything under the home folder and the outside folder, with contents: to show nothing changed.
        func snapshot() -> [String: Data] {
            var files: [String: Data] = [:]
            for root in [rig.home, outside] {
                let enumerator = FileManager.default.enumerator(atPath: root)
                while let name = enumerator?.nextObject() as? String {
                    files[root + "/" + name] = FileManager.default.contents(atPath: root + "/" + name) ?? Data()
                }
            }
            return files
        }
    }

    private static func message(_ response: LoopbackHTTP.Response) -> String {
        ((try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any])?["error"] as? String ?? String(decoding: response.body, as: UTF8.self)
    }

    @Test func withoutTheTokenNothingIsServed() async throws {
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        for path in ["/", "/static/app.js", "/api/places", "/api/list?path=\(target.documents)", "/api/events"] {
            let response = try LoopbackHTTP.request(port: target.rig.port, method: "GET", path: path)
            #expect(response.status == 401, "\(path)")
            #expect(response.headers["content-security-policy"]?.contains("default-src 'none'") == true, "\(path)")
        }
        let wrong = try LoopbackHTTP.request(port: target.rig.port, method: "GET", path: "/?token=" + String(repeating: "0", count: 64))
        #expect(wrong.status == 401)
        #expect(wrong.headers["set-cookie"] == nil)
        let wrongCookie = try LoopbackHTTP.request(port: target.rig.port, method: "GET", path: "/api/places", headers: ["Cookie": "folio-\(target.rig.port)=nope"])
        #expect(wrongCookie.status == 401)
        // The right token: a cookie only scripts cannot read, sent to this site only, and the token
        // leaves the address.
        let right = try LoopbackHTTP.request(port: target.rig.port, method: "GET", path: "/?token=\(target.rig.token)&path=/x")
        #expect(right.status == 303)
        #expect(right.headers["location"] == "/?path=/x")
        #expect(right.headers["set-cookie"] == "folio-\(target.rig.port)=\(target.rig.token); Path=/; HttpOnly; SameSite=Strict")
        // web.json is the user's alone.
        var status = stat()
        #expect(stat(target.rig.environment["XDG_RUNTIME_DIR"]! + "/folio/web.json", &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
    }

    @Test func aForeignHostIsRefused() async throws {
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        let port = target.rig.port
        for host in ["evil.example:\(port)", "127.0.0.1:\(port + 1)", "localhost.evil.example:\(port)", "127.0.0.1", "[::1]:\(port)"] {
            let response = try target.get("/api/places", headers: ["Host": host])
            #expect(response.status == 421, "\(host)")
        }
        #expect(try target.get("/api/places", headers: ["Host": "localhost:\(port)"]).status == 200)
        #expect(try target.get("/api/places").status == 200)
    }

    /// A request that names another host in a second `Host` field, or in an absolute-form URL
    /// (`GET http://evil.example/… HTTP/1.1`), is refused: only the first `Host` was checked.
    @Test func aSecondHostOrAnAbsoluteURLIsRefused() async throws {
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        let port = target.rig.port
        let doubled = try target.get("/api/places", headers: ["Host": "127.0.0.1:\(port)\r\nHost: evil.example:\(port)"])
        #expect(doubled.status == 400, "\(doubled.status) \(Self.message(doubled))")
        for url in ["http://evil.example:\(port)/api/places", "http://127.0.0.1:\(port)/api/places"] {
            let absolute = try target.get(url)
            #expect(absolute.status == 400, "\(url): \(absolute.status) \(Self.message(absolute))")
        }
        #expect(try target.get("/api/places").status == 200)
    }

    /// A body past the page's limit (1 MiB) is refused as too large, and changes nothing.
    @Test func aBodyPastTheLimitIsTooLarge() async throws {
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        let before = target.snapshot()
        let padding = String(repeating: "x", count: 2 << 20)
        let response = try target.post("/api/rename", ["path": target.documents + "/mine.txt", "name": "taken.txt", "padding": padding])
        #expect(response.status == 413, "\(response.status) \(Self.message(response))")
        #expect(target.snapshot() == before)
    }

    @Test func crossOriginChangesAreRefused() async throws {
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        let before = target.snapshot()
        let rename: [String: Any] = ["path": target.documents + "/mine.txt", "name": "taken.txt"]
        let attempts: [(String, [String: String], Int)] = [
            ("another origin", ["Origin": "http://evil.example"], 403),
            ("another port", ["Origin": "http://127.0.0.1:\(target.rig.port + 1)"], 403),
            ("no origin", ["Origin": ""], 403),
            ("a cross-site fetch", ["Sec-Fetch-Site": "cross-site"], 403),
            ("a form's body", ["Content-Type": "application/x-www-form-urlencoded"], 415),
            ("plain text", ["Content-Type": "text/plain"], 415),
        ]
        for (what, headers, status) in attempts {
            var headers = headers
            if headers["Origin"] == "" { headers.removeValue(forKey: "Origin") }
            let response: LoopbackHTTP.Response
            if what == "no origin" {
                response = try LoopbackHTTP.request(
                    port: target.rig.port, method: "POST", path: "/api/rename",
                    headers: ["Cookie": target.cookie, "Content-Type": "application/json"], body: try JSONSerialization.data(withJSONObject: rename))
            } else {
                response = try target.post("/api/rename", rename, headers: headers)
            }
            #expect(response.status == status, "\(what): \(Self.message(response))")
        }
        // Without the cookie, even from the right origin.
        let anonymous = try LoopbackHTTP.request(
            port: target.rig.port, method: "POST", path: "/api/rename",
            headers: ["Origin": "http://127.0.0.1:\(target.rig.port)", "Content-Type": "application/json"], body: try JSONSerialization.data(withJSONObject: rename))
        #expect(anonymous.status == 401)
        #expect(target.snapshot() == before)
        // The same request from the page itself works.
        #expect(try target.post("/api/rename", rename).status == 200)
        #expect(FileManager.default.fileExists(atPath: target.documents + "/taken.txt"))
    }

    @Test func pathTraversalInEveryParameterIsRefused() async throws {
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        let documents = target.documents
        let mine = documents + "/mine.txt"
        let outside = target.outside
        let hostile = [
            outside, outside + "/secret.txt", documents + "/../../..", documents + "/./mine.txt", documents + "/escape", documents + "/escape/secret.txt",
            "Documents/mine.txt", documents + "/", "/etc", "/", documents + "//mine.txt",
        ]
        let before = target.snapshot()
        for path in hostile {
            let encoded = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let listing = try target.get("/api/list?path=" + encoded)
            #expect([400, 403, 404].contains(listing.status), "list \(path): \(listing.status)")
            // A link in the user's folder may itself be renamed, moved or trashed (what it leads to
            // is never touched): those three are tried on it below.
            let onTheLinkItself = path == documents + "/escape"
            for (route, body) in [
                ("rename", ["path": path, "name": "x"]), ("move", ["paths": [path], "to": documents]), ("move", ["paths": [mine], "to": path]),
                ("duplicate", ["path": path]), ("folder", ["parent": path, "name": "new"]), ("trash", ["paths": [path]]),
                ("tags", ["path": path, "tags": ["Red"]]), ("favorite", ["path": path, "favorite": true]),
            ] as [(String, [String: Any])] {
                if onTheLinkItself && (route == "rename" || route == "trash" || (route == "move" && (body["to"] as? String) == documents)) { continue }
                let response = try target.post("/api/" + route, body)
                #expect([400, 403, 404].contains(response.status), "\(route) \(path): \(response.status) \(Self.message(response))")
            }
        }
        // Encoded forms reach the checks decoded: %2e%2e is "..", %00 a NUL.
        for query in ["path=" + documents + "/%2e%2e/%2e%2e", "path=" + documents + "%00/x", "path=%2fetc"] {
            let response = try target.get("/api/list?" + query)
            #expect([400, 403].contains(response.status), "\(query): \(response.status)")
        }
        // Names that are not one plain component.
        for name in ["..", ".", "a/b", "../../escaped", "", String(repeating: "n", count: 300)] {
            #expect(try target.post("/api/rename", ["path": mine, "name": name]).status == 400, "rename to \(name)")
            #expect(try target.post("/api/folder", ["parent": documents, "name": name]).status == 400, "folder \(name)")
        }
        // The trash: a name that leaves it, and a record (as another program could write) whose
        // original path is outside what the page may reach.
        #expect(try target.post("/api/restore", ["name": "../../Documents/mine.txt"]).status == 404)
        let trash = target.rig.environment["XDG_DATA_HOME"]! + "/Trash"
        try FileManager.default.createDirectory(atPath: trash + "/files", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: trash + "/info", withIntermediateDirectories: true)
        try Data("planted".utf8).write(to: URL(fileURLWithPath: trash + "/files/planted"))
        try Data("[Trash Info]\nPath=\(outside)/planted\nDeletionDate=2026-01-01T00:00:00\n".utf8).write(to: URL(fileURLWithPath: trash + "/info/planted.trashinfo"))
        let restore = try target.post("/api/restore", ["name": "planted"])
        #expect(restore.status == 403, "\(Self.message(restore))")
        #expect(!FileManager.default.fileExists(atPath: outside + "/planted"))
        try FileManager.default.removeItem(atPath: trash)
        // Bodies that are not what a route takes.
        #expect(try target.post("/api/rename", ["path": 7]).status == 400)
        let garbage = try LoopbackHTTP.request(
            port: target.rig.port, method: "POST", path: "/api/move",
            headers: ["Cookie": target.cookie, "Origin": "http://127.0.0.1:\(target.rig.port)", "Content-Type": "application/json"], body: Data("{not json".utf8))
        #expect(garbage.status == 400)
        #expect(target.snapshot() == before)
        // The link itself is renamed; the folder it leads to is untouched.
        #expect(try target.post("/api/rename", ["path": documents + "/escape", "name": "escape2"]).status == 200)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: documents + "/escape2")) == outside)
        #expect(FileManager.default.contents(atPath: outside + "/secret.txt") == Data("secret".utf8))
    }

    /// Another user's process is refused, cookie and all: anyone may connect to 127.0.0.1.
    @Test func anotherUserIsRefused() async throws {
        guard getuid() == 0, let setpriv = ProcessRunner.which("setpriv"), let curl = ProcessRunner.which("curl") else {
            print("skipped: needs root, setpriv and curl to act as another user")
            return
        }
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        let arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Cookie: \(target.cookie)", "http://127.0.0.1:\(target.rig.port)/api/places"]
        let mine = try ProcessRunner.run(URL(fileURLWithPath: curl), arguments)
        #expect(mine.stdout == "200", "\(mine.stdout) \(mine.stderr)")
        let theirs = try ProcessRunner.run(URL(fileURLWithPath: setpriv), ["--reuid=65534", "--regid=65534", "--clear-groups", curl] + arguments)
        #expect(theirs.stdout == "403", "\(theirs.stdout) \(theirs.stderr)")
        #expect(target.rig.daemon.logs("refused a connection of another user"))
    }

    /// The places Folio keeps (the Drive, an indexed root) cannot be renamed, moved or trashed.
    @Test func folioPlacesStayWhereTheyAre() async throws {
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        try target.rig.folio(["index", "add", target.documents])
        let drive = FolioPaths(environment: target.rig.environment).driveDirectory
        try FileManager.default.createDirectory(atPath: drive, withIntermediateDirectories: true)
        for path in [drive, target.documents] {
            #expect(try target.post("/api/rename", ["path": path, "name": "elsewhere"]).status == 400, "\(path)")
            #expect(try target.post("/api/trash", ["paths": [path]]).status == 400, "\(path)")
            #expect(try target.post("/api/move", ["paths": [path], "to": target.rig.home]).status == 400, "\(path)")
        }
        #expect(FileManager.default.fileExists(atPath: drive) && FileManager.default.fileExists(atPath: target.documents))
    }

    /// `folio browse` hands the browser a file only the user can read, never the token itself
    /// (another user could read a command line); `--print` prints the address.
    @Test func browseKeepsTheTokenOffCommandLines() async throws {
        let target = try Target()
        defer { Task { await target.rig.stop() } }
        let bin = try TemporaryDirectory("web-browse-bin")
        let recorded = bin.path + "/argv"
        let opener = try bin.write("xdg-open", "#!/bin/sh\necho \"$@\" > '\(recorded)'\n")
        #expect(chmod(opener.path, 0o755) == 0)
        var environment = target.rig.environment
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["DISPLAY"] = ":9"
        let opened = try ProcessRunner.run(ProcessRunner.folioExecutable(), ["browse", target.documents], environment: environment)
        #expect(opened.status == 0, "\(opened.stderr)")
        let argument = try String(contentsOfFile: recorded, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!argument.contains(target.rig.token))
        let file = try #require(URL(string: argument)).path
        var status = stat()
        #expect(stat(file, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let page = try String(contentsOfFile: file, encoding: .utf8)
        #expect(page.contains("http://127.0.0.1:\(target.rig.port)/?token=\(target.rig.token)&amp;path=\(target.documents)"))
        let printed = try ProcessRunner.run(ProcessRunner.folioExecutable(), ["browse", "--print"], environment: environment)
        #expect(printed.stdout == "http://127.0.0.1:\(target.rig.port)/?token=\(target.rig.token)\n")
    }
}
