import FolioServers
import FolioSync
import FolioSystem
import Foundation
import Logging
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench mount`: the drive's FUSE mount against the same replica read directly, in the same
/// run: a large downloaded file read sequentially (served by the kernel from the replica's file
/// when passthrough is on), and `find` stat'ing every entry of a tree.
enum MountBenchmarks {
    static func run(files: Int, largeSize: Int64, rounds: Int) throws {
        try BenchmarkHarness.withScratchDirectory("mount") { scratch in
            let folder = scratch + "/Drive"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let perFolder = 1000
            print("making the replica: \(files) empty files in folders of \(perFolder), and a file of \(largeSize) bytes")
            mkdir(folder + "/tree", 0o755)
            for index in 0..<files {
                if index % perFolder == 0 { mkdir(folder + "/tree/f\(index / perFolder)", 0o755) }
                let file = open(folder + "/tree/f\(index / perFolder)/file\(index)", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
                guard file >= 0 else { throw BenchmarkFailure("cannot make the tree: \(Errno(rawValue: errno))") }
                close(file)
            }
            try writeLarge(folder + "/large.bin", size: largeSize)
            func mounted() throws -> DriveMount {
                try DriveMount(folder, materialize: { _, _, _ in throw CocoaError(.fileReadUnknown) }, logger: Logger(label: "folio.bench.mount"))
            }
            let find = ExecutableSearch.locate("find") ?? "/usr/bin/find"
            func stat(_ root: String) { SpawnedProcess.run([find, root + "/tree", "-printf", "%s %T@\n"]) }
            // The first find after mounting: nothing of the mount in the kernel's caches yet.
            var cold: [Double] = [], plain: [Double] = []
            for _ in 0..<rounds {
                let fresh = try mounted()
                let beneath = fresh.fileSystem.replicaPath
                cold.append(seconds { stat(folder) })
                plain.append(seconds { stat(beneath) })
                fresh.unmount()
            }
            // Both sides cold: the kernel's caches dropped before each (root only), what a first
            // listing costs through the mount and in the plain folder.
            var bothCold: [Double] = [], plainCold: [Double] = []
            if dropCaches() {
                for _ in 0..<rounds {
                    let fresh = try mounted()
                    _ = dropCaches()
                    bothCold.append(seconds { stat(folder) })
                    fresh.unmount()
                    _ = dropCaches()
                    plainCold.append(seconds { stat(folder) })
                }
            }
            let mount = try mounted()
            defer { mount.unmount() }
            // The replica beneath the mount (a child process reaches it too).
            let beneath = mount.fileSystem.replicaPath
            var harness = BenchmarkHarness(rounds: rounds)
            print("median of \(rounds) rounds, warm caches (each read once first)")
            _ = try readAll(folder + "/large.bin")
            _ = try readAll(beneath + "/large.bin")
            harness.duration("sequential read of \(largeSize >> 20) MiB through the mount", baselineName: "the same file read directly") {
                _ = try? readAll(folder + "/large.bin")
            } baseline: {
                _ = try? readAll(beneath + "/large.bin")
            }
            stat(folder)
            stat(beneath)
            harness.blockRatios(
                "find -printf '%s %T@' over \(files) entries, the first after mounting", unit: "ms", values: cold.map { $0 * 1000 },
                baselineName: "the same tree read directly", baselines: plain.map { $0 * 1000 })
            if !bothCold.isEmpty {
                harness.blockRatios(
                    "find -printf '%s %T@' over \(files) entries, the first after mounting, the kernel's caches dropped", unit: "ms",
                    values: bothCold.map { $0 * 1000 }, baselineName: "the plain folder, its caches dropped too", baselines: plainCold.map { $0 * 1000 })
            } else {
                print("(not root: the first listings with the kernel's caches dropped are not measured)")
            }
            harness.duration("find -printf '%s %T@' over \(files) entries through the mount, again", baselineName: "the same tree read directly") {
                stat(folder)
            } baseline: {
                stat(beneath)
            }
            harness.report()
        }
    }

    /// Writes what is dirty and drops the kernel's page, dentry and inode caches (root only):
    /// false when it cannot.
    private static func dropCaches() -> Bool {
        Glibc.sync()
        let file = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)
        guard file >= 0 else { return false }
        defer { close(file) }
        return Glibc.write(file, "3\n", 2) == 2
    }

    /// The wall time of `body`, in seconds.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Writes `size` bytes of a pattern to `path`.
    static func writeLarge(_ path: String, size: Int64) throws {
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw BenchmarkFailure("cannot write \(path)") }
        defer { close(file) }
        let block = [UInt8](repeating: 0x5a, count: 1 << 20)
        var written: Int64 = 0
        while written < size {
            let count = block.withUnsafeBytes { Glibc.write(file, $0.baseAddress, Int(min(Int64(block.count), size - written))) }
            guard count > 0 else { throw BenchmarkFailure("cannot write \(path): \(Errno(rawValue: errno))") }
            written += Int64(count)
        }
    }

    /// Reads `path` to its end in 1 MiB reads: the bytes read.
    static func readAll(_ path: String) throws -> Int64 {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw BenchmarkFailure("cannot read \(path): \(Errno(rawValue: errno))") }
        defer { close(file) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let count = read(file, buffer.baseAddress, buffer.count)
            if count <= 0 { break }
            total += Int64(count)
        }
        return total
    }
}
