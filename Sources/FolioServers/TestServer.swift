#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Foundation

/// A real server started on 127.0.0.1 for a test or a benchmark, on a free port, stopped when the value goes away:
/// Apache httpd with mod_dav_fs, WsgiDAV, lighttpd with mod_webdav, `rclone serve webdav` (a server
/// that ignores If-Match), nginx's dav module (no PROPFIND: not a whole WebDAV server), and moto (S3).
public final class TestServer: @unchecked Sendable {
    /// The servers.
    public enum Kind: String, Sendable, CaseIterable {
        case apache, wsgidav, lighttpd, rclone, nginx, moto
    }

    /// Which server (nil for a test's own script).
    public let kind: Kind?
    /// Its port on 127.0.0.1.
    public let port: Int
    /// The folder a WebDAV server serves (nil for moto).
    public let root: URL?
    /// The server's base URL.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }
    /// For moto: an IAM user's access key (every request must be signed with it: moto checks
    /// signatures once its first few unauthenticated actions are used up) and a bucket it may use.
    public private(set) var s3: S3Account?

    /// An S3 account on a test server.
    public struct S3Account: Sendable {
        /// The access key id.
        public var accessKey: String
        /// The secret key.
        public var secretKey: String
        /// A bucket that exists.
        public var bucket: String
    }

    private let process: Process
    private let directory: TemporaryDirectory
    private let logFile: URL

    /// What the server logged so far.
    public var log: String {
        var text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        for errors in ["logs/error.log", "logs/lighttpd-error.log", "logs/nginx-error.log"] {
            if let errors = try? String(contentsOf: directory.child(errors), encoding: .utf8) { text += errors }
        }
        return text
    }

    /// Apache's requests so far, a line each (method, status, path); empty for the other servers.
    /// Apache writes a line once it has answered, so a request just answered may be missing for a moment.
    public var requests: [Substring] {
        guard kind == .apache, let text = try? String(contentsOf: directory.child("logs/access.log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n")
    }

    /// Apache's requests answered after its first `after` ones, up to a marker request sent now (Apache
    /// logs a request once answered, so the marker's line follows every earlier one's), waiting at
    /// most ten seconds for the marker's line. Blocks: call it from a thread that may wait.
    public func requestsAnswered(after: Int) throws -> ArraySlice<Substring> {
        let marker = "/.folio-marker-\(UUID().uuidString)"
        _ = try LoopbackHTTP.request(port: port, method: "OPTIONS", path: marker)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let lines = requests
            if let end = lines.lastIndex(where: { $0.hasSuffix(" " + marker) }) { return lines[min(after, end)..<end] }
            usleep(5_000)
        }
        throw TestServerError("Apache's access log never showed the marker request \(marker)")
    }

    /// Why `kind` cannot run here (with the install hint), or nil when it can.
    public static func unavailability(_ kind: Kind) -> String? {
        switch kind {
        case .apache:
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/apache2") ? nil : "apache2 is not installed (apt-get install apache2; scripts/test does it)"
        case .rclone:
            ProcessRunner.which("rclone") == nil ? "rclone is not installed (apt-get install rclone; scripts/test does it)" : nil
        case .wsgidav:
            venvTool("wsgidav") == nil ? "WsgiDAV is not installed (scripts/test puts it in .venv-test)" : nil
        case .lighttpd:
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/lighttpd") && FileManager.default.fileExists(atPath: "/usr/lib/lighttpd/mod_webdav.so")
                ? nil : "lighttpd with mod_webdav is not installed (apt-get install lighttpd lighttpd-mod-webdav; scripts/test does it)"
        case .nginx:
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? nil : "nginx is not installed (apt-get install nginx; scripts/test does it)"
        case .moto:
            motoPython == nil ? "moto is not installed (pip install 'moto[server]'; scripts/test does it)" : nil
        }
    }

    /// Whether a test of `kind` should run: when the server is installed, and always in CI (where a
    /// missing server is a failure with the install hint, not a skip).
    public static func shouldRun(_ kind: Kind) -> Bool {
        unavailability(kind) == nil || ProcessInfo.processInfo.environment["CI"] != nil
    }

    /// Starts a server of `kind` and waits until it answers.
    ///
    /// moto checks signatures only when `enforcingSignatures`, and then wrongly refuses a correctly
    /// signed request whose query holds a `/` (a listing's prefix; boto3's own requests fail the same
    /// way): it rebuilds the query from a decoded URL. So tests of the provider's behaviour run
    /// without the check, and tests of credentials run with it, on listings of the bucket's root.
    /// - Throws: the reason it cannot run, or its log when it did not start.
    public convenience init(_ kind: Kind, enforcingSignatures: Bool = false) throws {
        if let reason = Self.unavailability(kind) { throw TestServerError(reason) }
        // nginx's dav module answers no OPTIONS, and its root (no index) is a 403 to GET: a missing file's 404 says it is up.
        let probe = kind == .moto ? ("GET", "/moto-api/", 200) : kind == .nginx ? ("HEAD", "/folio-ready-probe", 404) : ("OPTIONS", "/", 200)
        try self.init(kind: kind, serves: kind != .moto, probe: probe) { process, port, directory, root in
            try Self.configure(process, kind: kind, port: port, directory: directory, root: root)
            if kind == .moto, enforcingSignatures {
                // Three IAM actions and the bucket's creation go unchecked; every later request must be signed.
                process.environment = ProcessInfo.processInfo.environment.merging(["INITIAL_NO_AUTH_ACTION_COUNT": "4"]) { $1 }
            }
        }
        if kind == .moto { s3 = try makeAccount() }
    }

    /// Creates an IAM user with an access key and a bucket through boto3 (moto's own dependency),
    /// using moto's unauthenticated actions: afterwards moto refuses unsigned and wrongly signed requests.
    private func makeAccount() throws -> S3Account {
        let script = """
            import boto3, json, sys
            endpoint = "http://127.0.0.1:%s" % sys.argv[1]
            iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
            iam.create_user(UserName="folio")
            iam.put_user_policy(UserName="folio", PolicyName="all", PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
            key = iam.create_access_key(UserName="folio")["AccessKey"]
            s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
            s3.create_bucket(Bucket="folio")
            print(key["AccessKeyId"], key["SecretAccessKey"])
            """
        let output = try ProcessRunner.run(URL(fileURLWithPath: Self.motoPython!), ["-c", script, "\(port)"])
        let words = output.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        guard output.status == 0, words.count == 2 else {
            throw TestServerError("could not create moto's IAM user: \(output.stderr.suffix(2000))")
        }
        return S3Account(accessKey: words[0], secretKey: words[1], bucket: "folio")
    }

    /// Starts a test's own server: `executable` with `arguments(port)`, ready when `OPTIONS /` answers 200.
    public convenience init(script executable: URL, arguments: @escaping @Sendable (Int) -> [String]) throws {
        try self.init(kind: nil, serves: false, probe: ("OPTIONS", "/", 200)) { process, port, _, _ in
            process.executableURL = executable
            process.arguments = arguments(port)
        }
    }

    private init(
        kind: Kind?, serves: Bool, probe: (String, String, Int), configure: (Process, Int, TemporaryDirectory, URL?) throws -> Void
    ) throws {
        self.kind = kind
        directory = try TemporaryDirectory("folio-\(kind?.rawValue ?? "server")")
        logFile = directory.child("server.log")
        root = serves ? directory.child("root") : nil
        if let root { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true) }
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try LoopbackHTTP.freePort()
            let process = Process()
            do {
                try configure(process, port, directory, root)
                _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
                let log = try FileHandle(forWritingTo: logFile)
                process.standardOutput = log
                process.standardError = log
                process.standardInput = FileHandle.nullDevice
                try process.runWithNoSignalBlocked()
                try Self.waitUntilReady(probe, port: port, process: process)
                // Two servers started at once can be handed the same free port: the one that lost the
                // bind fails, but its probe is answered by the other. Only a server whose own process
                // (or one it started) holds the listening socket is this test's.
                let owners = [process.processIdentifier] + Self.processes(mentioning: directory.path)
                guard let inode = Self.listener(of: port), Self.holds(inode, pids: owners) else {
                    let holders = Self.listener(of: port).map { inode in
                        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { Self.holds(inode, pids: [$0]) }
                            .map { "\($0) " + ((try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8)) ?? "").replacingOccurrences(of: "\0", with: " ") }
                    }
                    throw TestServerError("port \(port) is held by another server: \(holders ?? ["no listener"]); ours: \(owners)")
                }
                self.process = process
                self.port = port
                return
            } catch {
                lastError = error
                kill(process.processIdentifier, SIGKILL)
                for leftover in Self.processes(mentioning: directory.path) { kill(leftover, SIGKILL) }
            }
        }
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        throw TestServerError("\(kind?.rawValue ?? "the server") did not start: \(lastError.map { "\($0)" } ?? "unknown"); log: \(text.suffix(2000))")
    }

    deinit { stop() }

    /// Stops the server: SIGTERM, SIGKILL if it is still there after a second, and SIGKILL for any process
    /// it left (Apache's workers outlive a parent that is killed). The server started with no signal
    /// blocked (``Foundation/Process/runWithNoSignalBlocked()``), so SIGTERM reaches it.
    public func stop() {
        let pid = process.processIdentifier
        if Self.isAlive(pid) {
            kill(pid, SIGTERM)
            for _ in 0..<20 where Self.isAlive(pid) { usleep(50_000) }
            if Self.isAlive(pid) { kill(pid, SIGKILL) }
        }
        for leftover in Self.processes(mentioning: directory.path) { kill(leftover, SIGKILL) }
        for _ in 0..<100 where LoopbackHTTP.isListening(port) { usleep(20_000) }
    }

    /// The server's own process (its first, for a server of several).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// The processor time (user and system, in seconds) the server has used so far: its processes'
    /// own, and what its workers that ended left to the process that collected them. A benchmark
    /// reads it before and after a step to see what each client's requests cost the server. Reads
    /// `/proc`: call it from a thread that may block.
    public var processorSeconds: Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let main = process.processIdentifier
        var total = 0.0
        for pid in Set([main] + Self.processes(mentioning: directory.path)) {
            // utime is field 14, stime 15, cutime 16, cstime 17 (the state, 3, is the first after the name).
            guard let fields = Self.statFields(pid), fields.count > 15, let user = Double(fields[11]), let system = Double(fields[12]),
                let children = Double(fields[13]), let childrenSystem = Double(fields[14])
            else { continue }
            total += user + system + (pid == main ? children + childrenSystem : 0)
        }
        return total / ticks
    }

    /// Whether `pid` runs (a zombie, exited but not yet collected, does not).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let state = statFields(pid)?.first else { return false }
        return !state.hasPrefix("Z")
    }

    /// The fields of `/proc/<pid>/stat` after the command's name (which may hold spaces and
    /// parentheses): the state first; nil when there is no such process.
    static func statFields(_ pid: Int32) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// The processes whose command line mentions `text`.
    /// The inode of the socket listening on 127.0.0.1:`port` (or on every address), from /proc/net/tcp.
    static func listener(of port: Int) -> String? {
        // The kernel writes the table while sockets come and go, and a table read in several
        // pieces can miss a line (its position is an index): read it whole, a few times.
        let suffix = ":" + String(format: "%04X", port)
        for _ in 0..<5 {
            for line in tcpTable().split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[3] == "0A", fields[1] == "0100007F\(suffix)" || fields[1] == "00000000\(suffix)" else { continue }
                return String(fields[9])
            }
        }
        return nil
    }

    /// `/proc/net/tcp`, read with one `read` into a buffer large enough for it.
    private static func tcpTable() -> String {
        let fd = open("/proc/net/tcp", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 8 << 20)
        var total = 0
        while total < buffer.count {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            guard count > 0 else { break }
            total += count
        }
        return String(decoding: buffer[..<total], as: UTF8.self)
    }

    /// Whether one of `pids` has the socket with `inode` open.
    static func holds(_ inode: String, pids: [Int32]) -> Bool {
        let target = "socket:[\(inode)]"
        for pid in pids {
            let folder = "/proc/\(pid)/fd"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                if (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + fd)) == target { return true }
            }
        }
        return false
    }

    /// The processes (other than this one) whose command line contains `text`: what a server or
    /// browser started under a test's scratch folder left running.
    public static func processes(mentioning text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard pid != getpid(), let line = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else { return false }
            return String(decoding: line.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self).contains(text)
        }
    }

    /// A Python interpreter that can import moto (the test venv's, or the machine's `python3`):
    /// moto runs as `python -m moto.server`, not through a launcher script that may not pass signals on.
    public static let motoPython: String? = {
        var candidates: [String] = []
        if let venv = venvTool("python3") { candidates.append(venv) }
        if let system = ProcessRunner.which("python3") { candidates.append(system) }
        for candidate in candidates {
            guard let output = try? ProcessRunner.run(URL(fileURLWithPath: candidate), ["-c", "import sys, moto.server; print(sys.executable)"]),
                output.status == 0
            else { continue }
            return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return nil
    }()

    /// Changes the served tree's owner to the server's user (Apache runs as www-data when started
    /// as root): call after writing into ``root`` directly.
    public func fixOwnership() {
        guard kind == .apache || kind == .nginx, getuid() == 0, let root else { return }
        _ = try? ProcessRunner.run(URL(fileURLWithPath: "/bin/chown"), ["-R", "www-data:www-data", root.path])
    }

    // MARK: Launching

    static func venvTool(_ name: String, filePath: String = #filePath) -> String? {
        var folder = URL(fileURLWithPath: filePath)
        while folder.path != "/" {
            folder.deleteLastPathComponent()
            let candidate = folder.appendingPathComponent(".venv-test/bin/\(name)")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
        }
        return nil
    }

    private static func configure(_ process: Process, kind: Kind, port: Int, directory: TemporaryDirectory, root: URL?) throws {
        switch kind {
        case .apache:
            let base = directory.path
            for folder in ["run", "logs"] { try FileManager.default.createDirectory(atPath: "\(base)/\(folder)", withIntermediateDirectories: true) }
            let modules = "/usr/lib/apache2/modules"
            let asRoot = getuid() == 0
            let config = """
                ServerRoot \(base)
                ServerName 127.0.0.1
                Listen 127.0.0.1:\(port)
                PidFile \(base)/run/httpd.pid
                LoadModule mpm_event_module \(modules)/mod_mpm_event.so
                LoadModule authz_core_module \(modules)/mod_authz_core.so
                LoadModule dav_module \(modules)/mod_dav.so
                LoadModule dav_fs_module \(modules)/mod_dav_fs.so
                LoadModule mime_module \(modules)/mod_mime.so
                TypesConfig /etc/mime.types
                ErrorLog \(base)/logs/error.log
                CustomLog \(base)/logs/access.log "%m %>s %U"
                DefaultRuntimeDir \(base)/run
                DAVLockDB \(base)/run/DAVLock
                DocumentRoot \(root!.path)
                \(asRoot ? "User www-data\nGroup www-data" : "")
                <Directory \(root!.path)>
                  Dav On
                  Require all granted
                </Directory>
                """
            try config.write(toFile: "\(base)/httpd.conf", atomically: true, encoding: .utf8)
            if asRoot {
                _ = try ProcessRunner.run(URL(fileURLWithPath: "/bin/chown"), ["-R", "www-data:www-data", root!.path, "\(base)/run", "\(base)/logs"])
                // www-data must be able to reach the served folder through its parents.
                chmod(base, 0o755)
            }
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/apache2")
            process.arguments = ["-f", "\(base)/httpd.conf", "-DFOREGROUND"]
        case .lighttpd:
            let base = directory.path
            for folder in ["run", "logs"] { try FileManager.default.createDirectory(atPath: "\(base)/\(folder)", withIntermediateDirectories: true) }
            // As Debian ships it: names with control characters are refused (400), and a collection
            // named without its trailing slash is redirected (308) to the slashed URL, MOVE included.
            let config = """
                server.modules = ( "mod_webdav" )
                server.document-root = "\(root!.path)"
                server.bind = "127.0.0.1"
                server.port = \(port)
                server.errorlog = "\(base)/logs/lighttpd-error.log"
                server.pid-file = "\(base)/run/lighttpd.pid"
                server.upload-dirs = ( "\(base)/run" )
                mimetype.assign = ( "" => "application/octet-stream" )
                webdav.activate = "enable"
                webdav.is-readonly = "disable"
                webdav.sqlite-db-name = "\(base)/run/webdav.db"
                """
            try config.write(toFile: "\(base)/lighttpd.conf", atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/lighttpd")
            process.arguments = ["-D", "-f", "\(base)/lighttpd.conf"]
        case .nginx:
            let base = directory.path
            for folder in ["run", "logs", "tmp"] { try FileManager.default.createDirectory(atPath: "\(base)/\(folder)", withIntermediateDirectories: true) }
            // The dav module alone, as `apt-get install nginx` gives it: PUT, DELETE, MKCOL, COPY and
            // MOVE, but no PROPFIND (that needs the separate dav-ext module).
            let config = """
                daemon off;
                \(getuid() == 0 ? "user www-data;" : "")
                worker_processes 1;
                pid \(base)/run/nginx.pid;
                error_log \(base)/logs/nginx-error.log;
                events { worker_connections 64; }
                http {
                  access_log off;
                  client_body_temp_path \(base)/tmp/body;
                  proxy_temp_path \(base)/tmp/proxy;
                  fastcgi_temp_path \(base)/tmp/fastcgi;
                  uwsgi_temp_path \(base)/tmp/uwsgi;
                  scgi_temp_path \(base)/tmp/scgi;
                  server {
                    listen 127.0.0.1:\(port);
                    root \(root!.path);
                    location / { dav_methods PUT DELETE MKCOL COPY MOVE; create_full_put_path on; }
                  }
                }
                """
            try config.write(toFile: "\(base)/nginx.conf", atomically: true, encoding: .utf8)
            if getuid() == 0 {
                // nginx's worker runs as www-data when started as root: it must reach and write the folder.
                _ = try ProcessRunner.run(URL(fileURLWithPath: "/bin/chown"), ["-R", "www-data:www-data", root!.path, "\(base)/tmp"])
                chmod(base, 0o755)
            }
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            process.arguments = ["-c", "\(base)/nginx.conf", "-e", "\(base)/logs/nginx-error.log"]
        case .wsgidav:
            process.executableURL = URL(fileURLWithPath: venvTool("wsgidav")!)
            process.arguments = ["--host", "127.0.0.1", "--port", "\(port)", "--root", root!.path, "--auth", "anonymous", "--server", "cheroot", "-q"]
        case .rclone:
            process.executableURL = URL(fileURLWithPath: ProcessRunner.which("rclone")!)
            process.arguments = ["serve", "webdav", root!.path, "--addr", "127.0.0.1:\(port)", "--etag-hash", "MD5", "--config", "/dev/null"]
        case .moto:
            process.executableURL = URL(fileURLWithPath: motoPython!)
            // HTTP/1.0, one request per connection: with werkzeug's keep-alive, a PUT that moto refuses
            // before reading its body (a 412) leaves the body in the connection, and the next request
            // on it gets a 400 or another reply's bytes (seen under load).
            process.arguments = [
                "-c",
                "import sys, werkzeug.serving as s; s.WSGIRequestHandler.protocol_version = 'HTTP/1.0'; from moto.server import main; main(sys.argv[1:])",
                "-H", "127.0.0.1", "-p", "\(port)",
            ]
        }
    }

    private static func waitUntilReady(_ probe: (String, String, Int), port: Int, process: Process) throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard process.isRunning else { throw TestServerError("exited with status \(process.terminationStatus)") }
            if LoopbackHTTP.isListening(port) {
                if let reply = try? LoopbackHTTP.request(port: port, method: probe.0, path: probe.1, timeout: 5), reply.status == probe.2 { return }
            }
            usleep(50_000)
        }
        throw TestServerError("not ready within 30 s")
    }
}

/// Why a test server could not run.
public struct TestServerError: Error, CustomStringConvertible {
    /// The reason.
    public var description: String
    init(_ description: String) { self.description = description }
}
