import Folio
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench coordination`: coordinated reads and writes through a real daemon process against
/// a raw Unix-socket ping-pong of the same size and against `flock`, all measured in one run.
enum CoordinationBenchmarks {
    static func run(iterations: Int, seconds: Double) throws {
        try BenchmarkHarness.withScratchDirectory("coordination") { root in try run(iterations: iterations, seconds: seconds, root: root) }
    }

    private static func run(iterations: Int, seconds: Double, root: String) throws {
        let daemon = try BenchmarkDaemon(root: root)
        defer { daemon.stop() }
        let executable = daemon.executable
        let environment = daemon.environment
        let socket = daemon.socket
        let echoSocket = daemon.echoSocket

        let file = root + "/document.txt"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let url = URL(fileURLWithPath: file)
        let engine = try DaemonCoordinationEngine(socketPath: socket)
        let local = LocalCoordinationEngine()
        var harness = BenchmarkHarness(rounds: 1)
        print("coordination round trips: \(iterations) each, after \(iterations / 10) warm-up; a daemon process and an echo process on this machine")

        // The raw socket ping-pong carries frames of the sizes a claim and its grant have.
        let claimFrame = try WireValueEncoder().encode(
            SubmitClaim(ClaimRequest(claim: 1_000_000, purpose: UUID().uuidString, presenter: nil, items: [ClaimItem(path: file, access: .write([]))])))
        let requestSize = WireValue.object(["id": 1_000_000, "method": .string(SubmitClaim.method), "params": claimFrame]).serialized().count + 1
        let raw = try PingPong(socket: echoSocket, requestSize: requestSize)
        print("(raw frame: \(requestSize) bytes out, \(PingPong.replySize) back)")

        let lockFD = open(file, O_RDWR | O_CLOEXEC)
        defer { close(lockFD) }
        let flocks = measure(iterations) {
            flock(lockFD, LOCK_EX)
            flock(lockFD, LOCK_UN)
        }

        var error: NSError?
        let write = { FileCoordinator(filePresenter: nil, engine: engine).coordinate(writingItemAt: url, options: [], error: &error) { _ in } }
        let read = { FileCoordinator(filePresenter: nil, engine: engine).coordinate(readingItemAt: url, options: [], error: &error) { _ in } }
        // The round trips against the raw ping-pong alternate in blocks, so drift on a shared
        // machine falls on both sides; each core placement is measured apart (see `CorePlacement`).
        let blocks = 10, perBlock = max(100, iterations / 10)
        for placement in CorePlacement.available {
            placement.apply(servers: [daemon.daemonPID, daemon.echoPID])
            let suffix = "[\(placement.rawValue)]"
            harness.alternated(
                "coordinated write via daemon \(suffix)", blocks: blocks, count: perBlock, baselineName: "raw Unix-socket ping-pong",
                work: write, baseline: { raw.roundTrip() })
            harness.alternated(
                "coordinated read via daemon \(suffix)", blocks: blocks, count: perBlock, baselineName: "raw Unix-socket ping-pong",
                work: read, baseline: { raw.roundTrip() })
            harness.alternated(
                "coordinated write via daemon \(suffix)", blocks: blocks, count: perBlock, fraction: 0.99,
                baselineName: "raw Unix-socket ping-pong", work: write, baseline: { raw.roundTrip() })
            // The transport alone: a request the daemon answers from memory, no arbiter.
            harness.alternated(
                "status request via daemon (transport only) \(suffix)", blocks: blocks, count: perBlock,
                baselineName: "raw Unix-socket ping-pong", work: { _ = try? engine.send(DaemonStatus()) }, baseline: { raw.roundTrip() })
        }
        CorePlacement.free.apply(servers: [daemon.daemonPID, daemon.echoPID])
        let writes = measure(iterations, write)
        let localWrites = measure(iterations) {
            FileCoordinator(filePresenter: nil, engine: local).coordinate(writingItemAt: url, options: [], error: &error) { _ in }
        }
        if let error { throw error }
        harness.latency("coordinated write via daemon", samples: writes, baselineName: "flock EX+UN", baselineSamples: flocks)
        harness.latency("coordinated write in-process engine", samples: localWrites, baselineName: "flock EX+UN", baselineSamples: flocks)

        // Four client processes hammering distinct files, then one shared file.
        let distinct = (0..<4).map { root + "/file-\($0).txt" }
        for path in distinct { _ = FileManager.default.createFile(atPath: path, contents: Data("x".utf8)) }
        // Three runs of each, alternated; the median run's rate (one run of 2 s varied by a quarter
        // from one to the next here).
        for (label, files) in [("4 processes, distinct files", distinct), ("4 processes, one shared file", Array(repeating: file, count: 4))] {
            var coordinated: [Double] = [], flocked: [Double] = []
            for _ in 0..<3 {
                coordinated.append(try hammer(executable, environment, mode: "coordinated", files: files, seconds: seconds))
                flocked.append(try hammer(executable, environment, mode: "flock", files: files, seconds: seconds))
            }
            print("(\(label): coordinated runs \(coordinated.map { BenchmarkHarness.format($0) }), flock runs \(flocked.map { BenchmarkHarness.format($0) }))")
            harness.throughput(
                "coordinated writes, \(label) (median of 3 runs)", rate: coordinated.sorted()[1], baselineName: "flock, same processes and files",
                baselineRate: flocked.sorted()[1])
        }

        // Writer hand-off: a writer waits while another holds the file; the time from the holder's
        // release to the waiter's accessor.
        let second = try DaemonCoordinationEngine(socketPath: socket)
        let handoffs = handOff(count: max(200, iterations / 20), engines: (engine, second), url: url)
        let flockHandoffs = flockHandOff(count: max(200, iterations / 20), path: file)
        harness.latency("writer hand-off via daemon", samples: handoffs, baselineName: "flock hand-off between two descriptions", baselineSamples: flockHandoffs)
        harness.report()
        engine.disconnect()
        second.disconnect()
    }

    /// Per-operation times in nanoseconds, after a tenth as many warm-up runs.
    static func measure(_ count: Int, _ body: () -> Void) -> [UInt64] {
        for _ in 0..<max(1, count / 10) { body() }
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let start = DispatchTime.now().uptimeNanoseconds
            body()
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        return samples
    }

    static func hammer(_ executable: URL, _ environment: [String: String], mode: String, files: [String], seconds: Double) throws -> Double {
        let children = try files.map { file in
            try Child(executable, ["bench-worker", "hammer", mode, file, String(seconds)], environment: environment, captureOutput: true)
        }
        var total = 0.0
        for child in children {
            let output = child.waitForOutput()
            total += Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        return total / seconds
    }

    static func handOff(count: Int, engines: (CoordinationEngine, CoordinationEngine), url: URL) -> [UInt64] {
        let state = HandOffState()
        let waiter = Thread {
            for _ in 0..<count {
                state.waiterReady.wait()
                var error: NSError?
                FileCoordinator(filePresenter: nil, engine: engines.1).coordinate(writingItemAt: url, options: [], error: &error) { _ in
                    state.record(DispatchTime.now().uptimeNanoseconds)
                }
                state.waiterDone.signal()
            }
        }
        waiter.start()
        for _ in 0..<count {
            var error: NSError?
            FileCoordinator(filePresenter: nil, engine: engines.0).coordinate(writingItemAt: url, options: [], error: &error) { _ in
                state.waiterReady.signal()
                usleep(2000)  // the waiter's request reaches the daemon and queues
                state.releasedAt = DispatchTime.now().uptimeNanoseconds
            }
            state.waiterDone.wait()
        }
        return state.samples
    }

    static func flockHandOff(count: Int, path: String) -> [UInt64] {
        let state = HandOffState()
        let holderFD = open(path, O_RDWR | O_CLOEXEC), waiterFD = open(path, O_RDWR | O_CLOEXEC)
        defer {
            close(holderFD)
            close(waiterFD)
        }
        let waiter = Thread {
            for _ in 0..<count {
                state.waiterReady.wait()
                flock(waiterFD, LOCK_EX)
                state.record(DispatchTime.now().uptimeNanoseconds)
                flock(waiterFD, LOCK_UN)
                state.waiterDone.signal()
            }
        }
        waiter.start()
        for _ in 0..<count {
            flock(holderFD, LOCK_EX)
            state.waiterReady.signal()
            usleep(2000)
            state.releasedAt = DispatchTime.now().uptimeNanoseconds
            flock(holderFD, LOCK_UN)
            state.waiterDone.wait()
        }
        return state.samples
    }

    static func waitForSocket(_ path: String) throws {
        for _ in 0..<500 {
            if access(path, F_OK) == 0, (try? PingPong.connect(path)).map({ close($0) }) != nil { return }
            usleep(10_000)
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "nothing listens on \(path)"])
    }
}

/// Shared by the two sides of a hand-off measurement.
final class HandOffState: @unchecked Sendable {
    let waiterReady = DispatchSemaphore(value: 0)
    let waiterDone = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var released: UInt64 = 0
    private var collected: [UInt64] = []

    var releasedAt: UInt64 {
        get { lock.withLock { released } }
        set { lock.withLock { released = newValue } }
    }

    func record(_ acquiredAt: UInt64) {
        lock.withLock { collected.append(acquiredAt &- released) }
    }

    var samples: [UInt64] { lock.withLock { collected } }
}

/// A child process of the benchmark.
final class Child: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()

    init(_ executable: URL, _ arguments: [String], environment: [String: String], captureOutput: Bool = false) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = captureOutput ? output : FileHandle.nullDevice
        process.standardError = FileHandle.standardError
        try process.run()
    }

    func waitForOutput() -> String {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
    }
}

/// The raw baseline: a request of a claim's size out, a reply of a grant's size back.
final class PingPong {
    static let replySize = 64
    let fd: Int32
    private var request: [UInt8]
    private var reply = [UInt8](repeating: 0, count: 4096)

    init(socket: String, requestSize: Int) throws {
        fd = try Self.connect(socket)
        request = [UInt8](repeating: UInt8(ascii: "a"), count: requestSize - 1) + [UInt8(ascii: "\n")]
    }

    deinit { close(fd) }

    static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard UnixSocketAddress.connect(fd, to: path) == 0 else {
            close(fd)
            throw CocoaError(.fileReadUnknown)
        }
        return fd
    }

    func roundTrip() {
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var received = 0
        while received < Self.replySize {
            let n = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + received, Self.replySize - received, 0) }
            if n <= 0 { return }
            received += n
        }
    }
}
