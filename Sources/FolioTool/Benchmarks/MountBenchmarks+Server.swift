import Folio
import FolioDaemon
import FolioProviders
import FolioServers
import FolioSync
import FolioSystem
import Foundation
import Logging
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench mount`, second part: files that are not downloaded yet, on one Apache mod_dav_fs
/// server on loopback, read through Folio's mount, beside the server's own first byte (curl) and
/// `rclone mount --vfs-cache-mode full` over the same files; and a file written through each
/// mount until the server has it. Each side reads each file once, cold (a new file each round).
extension MountBenchmarks {
    /// The mounted drive and the engine that downloads into its replica.
    private final class FolioSide: @unchecked Sendable {
        var drive: DriveSync?
    }

    static func runOnServer(rounds: Int, largeSize: Int64, rclonePath: String?) async throws {
        guard let curl = ProcessRunner.which("curl") else { throw BenchmarkFailure("curl is not installed (apt-get install curl)") }
        if let reason = TestServer.unavailability(.apache) { throw BenchmarkFailure(reason) }
        let rclone = try SyncBenchmarks.tunedRclone(rclonePath)
        let server = try TestServer(.apache)
        let scratch = try TemporaryDirectory("folio-bench-mount-server")
        let files = server.root!.appendingPathComponent("files").path
        let sizes: [(label: String, bytes: Int64)] = [("64 KiB", 64 << 10), ("16 MiB", 16 << 20)]
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        try await SyncFileWork.run {
            for round in 0..<rounds {
                for size in sizes { try writeLarge(files + "/first-\(size.bytes)-\(round).bin", size: size.bytes) }
                try writeLarge(files + "/whole-\(round).bin", size: largeSize)
            }
            server.fixOwnership()
        }
        let base = server.baseURL.appendingPathComponent("files/")

        // Folio: the drive's folder mounted, its engine on the replica beneath, every file a placeholder.
        let home = scratch.child("folio").path
        let paths = FolioPaths(environment: ["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config", "XDG_STATE_HOME": home + "/state"])
        try FileManager.default.createDirectory(atPath: paths.driveDirectory, withIntermediateDirectories: true)
        let side = FolioSide()
        // Mounting and unmounting wait for the kernel and threads: on the pool for blocking work.
        let mount = try await SyncFileWork.run {
            try DriveMount(
                paths.driveDirectory,
                materialize: { path, progress, arriving in
                    guard let drive = side.drive else { throw CocoaError(.fileReadUnknown) }
                    _ = try await drive.download([path], progress: progress, arriving: arriving)
                }, logger: Logger(label: "folio.bench.mount"))
        }
        var rcloneMount: RcloneMount?
        let measured: Result<Void, any Error>
        do {
            let drive = try DriveSync(provider: WebDAVProvider(baseURL: base), paths: paths, replicaRoot: mount.fileSystem.replicaPath)
            side.drive = drive
            let listed = try await drive.sync()
            guard listed.placeholders == rounds * (sizes.count + 1) else { throw BenchmarkFailure("the first pass made \(listed.placeholders) placeholders") }

            // rclone: the same files, its own cache.
            let rcloneFolder = scratch.child("rclone").path
            try FileManager.default.createDirectory(atPath: rcloneFolder, withIntermediateDirectories: true)
            rcloneMount = try await SyncFileWork.run { try RcloneMount(rclone: rclone.path, url: base.absoluteString, at: rcloneFolder, cache: scratch.child("rclone-cache").path) }

            print("files not downloaded, on one Apache mod_dav_fs server on loopback, \(rounds) rounds (a new file each round); beside the server's")
            print("own first byte (curl's time to first byte) and \(rclone.version) mount --vfs-cache-mode full over the same files")
            var harness = BenchmarkHarness(rounds: rounds)
            /// Folio's seconds in milliseconds, round by round against each baseline's.
            func report(_ subject: String, _ values: [Double], against baselines: [(name: String, seconds: [Double])]) {
                for baseline in baselines {
                    harness.blockRatios(
                        subject, unit: "ms", values: values.map { $0 * 1000 }, baselineName: baseline.name, baselines: baseline.seconds.map { $0 * 1000 })
                }
            }
            for size in sizes {
                var folio: [Double] = [], server: [Double] = [], viaRclone: [Double] = []
                for round in 0..<rounds {
                    let name = "first-\(size.bytes)-\(round).bin"
                    server.append(try await SyncFileWork.run { try curlFirstByte(curl, base.appendingPathComponent(name).absoluteString) })
                    folio.append(try await SyncFileWork.run { try firstByte(paths.driveDirectory + "/" + name) })
                    // Its download goes on after the first byte: done before the next clock starts
                    // (downloads take the drive's lock one at a time).
                    try await settled(mount)
                    viaRclone.append(try await SyncFileWork.run { try firstByte(rcloneFolder + "/" + name) })
                }
                report(
                    "time to first byte of a \(size.label) file not downloaded, through Folio's mount", folio,
                    against: [("the server's first byte (curl)", server), ("rclone mount", viaRclone)])
            }
            var folio: [Double] = [], viaCurl: [Double] = [], viaRclone: [Double] = []
            for round in 0..<rounds {
                let name = "whole-\(round).bin"
                viaCurl.append(try await SyncFileWork.run { try curlWhole(curl, base.appendingPathComponent(name).absoluteString) })
                folio.append(try await SyncFileWork.run { try seconds { try readWhole(paths.driveDirectory + "/" + name, size: largeSize) } })
                viaRclone.append(try await SyncFileWork.run { try seconds { try readWhole(rcloneFolder + "/" + name, size: largeSize) } })
            }
            let label = largeSize >= 1 << 30 ? "\(largeSize >> 30) GiB" : "\(largeSize >> 20) MiB"
            report("a \(label) file not downloaded, read whole through Folio's mount", folio, against: [("curl's download of it", viaCurl), ("rclone mount", viaRclone)])

            // Writes: a file made through the mount, until the server has all of it.
            let written: Int64 = 64 << 20
            folio = []
            viaRclone = []
            for round in 0..<rounds {
                let name = "written-\(round).bin"
                folio.append(
                    try await seconds {
                        try await SyncFileWork.run { try writeLarge(paths.driveDirectory + "/" + name, size: written) }
                        let report = try await drive.sync()
                        guard report.uploaded == 1 else { throw BenchmarkFailure("the pass after a write uploaded \(report.uploaded) files") }
                    })
                viaRclone.append(
                    try await seconds {
                        try await SyncFileWork.run { try writeLarge(rcloneFolder + "/r" + name, size: written) }
                        try await waitForServer(files + "/r" + name, size: written)
                    })
            }
            report("\(written >> 20) MiB written through Folio's mount until the server has it (a pass)", folio, against: [("rclone mount (--vfs-write-back 0s)", viaRclone)])
            harness.report()
            measured = .success(())
        } catch {
            measured = .failure(error)
        }
        _ = try? await SyncFileWork.run { [rcloneMount] in
            rcloneMount?.stop()
            mount.unmount()
        }
        try measured.get()
    }

    /// Waits until the mount's downloads for programs have ended.
    private static func settled(_ mount: DriveMount) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while mount.fileSystem.downloadsUnderWay > 0 {
            guard ContinuousClock.now < deadline else { throw BenchmarkFailure("a download through the mount never ended") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Opens `path` and reads its first byte: the seconds it took.
    private static func firstByte(_ path: String) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw BenchmarkFailure("cannot open \(path): \(Errno(rawValue: errno))") }
        defer { close(file) }
        var byte: UInt8 = 0
        guard read(file, &byte, 1) == 1 else { throw BenchmarkFailure("cannot read \(path): \(Errno(rawValue: errno))") }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// curl's time to the first byte of `url`'s body, in seconds.
    private static func curlFirstByte(_ curl: String, _ url: String) throws -> Double {
        let output = try ProcessRunner.run(URL(fileURLWithPath: curl), ["-s", "-o", "/dev/null", "-w", "%{time_starttransfer}", url])
        guard output.status == 0, let value = Double(output.stdout) else { throw BenchmarkFailure("curl \(url) failed: \(output.stderr)") }
        return value
    }

    /// curl's time to download `url` whole (discarded), in seconds.
    private static func curlWhole(_ curl: String, _ url: String) throws -> Double {
        let output = try ProcessRunner.run(URL(fileURLWithPath: curl), ["-s", "-o", "/dev/null", "-w", "%{time_total}", url])
        guard output.status == 0, let value = Double(output.stdout) else { throw BenchmarkFailure("curl \(url) failed: \(output.stderr)") }
        return value
    }

    /// Waits until the server's file at `path` has `size` bytes (rclone sends in the background).
    private static func waitForServer(_ path: String, size: Int64) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while (try? FileStatus(path: .init(path)))?.size != size {
            guard ContinuousClock.now < deadline else { throw BenchmarkFailure("the server never got \(path)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Reads the file at `path` to its end: a failed or short read fails the benchmark rather than
    /// being timed.
    private static func readWhole(_ path: String, size: Int64) throws {
        let read = try readAll(path)
        guard read == size else { throw BenchmarkFailure("read \(read) of \(size) bytes of \(path)") }
    }

    private static func seconds(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        return (ContinuousClock.now - start).seconds
    }
}

/// `rclone mount` of a WebDAV folder with `--vfs-cache-mode full`, running until stopped.
private struct RcloneMount {
    let process: Process
    let folder: String

    init(rclone: String, url: String, at folder: String, cache: String) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["RCLONE_CONFIG_OURS_TYPE"] = "webdav"
        environment["RCLONE_CONFIG_OURS_URL"] = url
        environment["RCLONE_CONFIG_OURS_VENDOR"] = "other"
        process = Process()
        process.executableURL = URL(fileURLWithPath: rclone)
        process.arguments = [
            "mount", "ours:", folder, "--config", "/dev/null", "--vfs-cache-mode", "full", "--cache-dir", cache, "--vfs-write-back", "0s",
            "--webdav-pacer-min-sleep", "0", "-q",
        ]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.folder = folder
        let deadline = ContinuousClock.now + .seconds(20)
        while !Self.isMounted(folder) {
            guard process.isRunning, ContinuousClock.now < deadline else { throw BenchmarkFailure("rclone mount did not mount \(folder)") }
            usleep(10_000)
        }
    }

    static func isMounted(_ folder: String) -> Bool {
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").contains { $0.split(separator: " ").dropFirst(4).first.map(String.init) == folder }
    }

    func stop() {
        _ = try? ProcessRunner.run(URL(fileURLWithPath: ExecutableSearch.locate("fusermount3") ?? "/usr/bin/fusermount3"), ["-u", "-z", folder])
        process.terminate()
        process.waitUntilExit()
    }
}
