import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Watches the shared pools of this process — libdispatch's global queue and Swift's cooperative
/// pool — for stalls: each gets a heartbeat every 100 ms that must run *on* that pool, and a
/// monitor thread of its own (which also hands out the heartbeats, so that a stalled pool cannot
/// delay the others' beats) notices a heartbeat more than a second late. A stall is reported once
/// per episode with every thread's state and, where `gdb` is installed, their stacks, so the code
/// that blocked a shared pool can be named. Tests run it through their suite trait; a stall means
/// that something waited on a pool where nothing may wait.
public final class StallWatchdog: @unchecked Sendable {
    /// The one watchdog of the process: libdispatch's global queue and Swift's cooperative pool.
    public static let shared = StallWatchdog(pools: [
        Pool(name: "global queue") { beat in DispatchQueue.global().async(execute: beat) },
        // No executor preference: the task runs on, and so measures, Swift's cooperative pool.
        Pool(name: "cooperative pool") { beat in Task.detached { beat() } },
    ])

    /// A pool watched: its name, and how to run a heartbeat on it.
    public struct Pool: Sendable {
        public var name: String
        public var submit: @Sendable (@escaping @Sendable () -> Void) -> Void

        public init(name: String, submit: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
            self.name = name
            self.submit = submit
        }
    }

    /// One stall: which pool, from when, for how long, and what the threads were doing.
    public struct Stall: Sendable, CustomStringConvertible {
        /// The pool's name (`global queue`, `cooperative pool`).
        public var pool: String
        /// How long its heartbeat was late when the stall was seen (it may have lasted longer).
        public var seconds: Double
        /// Every thread of the process when the stall was seen.
        public var threads: String

        public var description: String {
            "stall watchdog: the \(pool) ran nothing for \(String(format: "%.1f", seconds)) s; threads:\n\(threads)"
        }
    }

    /// How late a heartbeat may be before it counts as a stall.
    public let limit: Double
    private let pools: [Pool]
    private let lock = NSLock()
    /// When each pool was handed the heartbeat it has not run yet (none while it has run them all).
    private var outstanding: [String: UInt64] = [:]
    private var stalled: Set<String> = []
    private var found: [Stall] = []
    private var started = false

    /// Whether each stall is written to stderr as it is seen (the suite's log then shows it).
    private let announces: Bool
    /// Whether a report takes every thread's stack with gdb (which stops the process for a moment).
    private let stacks: Bool

    /// A watchdog of `pools`, reporting a heartbeat later than `limit` seconds (on stderr too, when
    /// `announces`), with the threads' stacks when `stacks` and gdb is installed.
    public init(pools: [Pool], limit: Double = 1.0, announces: Bool = true, stacks: Bool = true) {
        self.pools = pools
        self.limit = limit
        self.announces = announces
        self.stacks = stacks
    }

    /// Starts the heartbeats and the monitor (once; later calls do nothing).
    public func start() {
        let first = lock.withLock {
            defer { started = true }
            return !started
        }
        guard first else { return }
        let monitor = Thread { [self] in monitorLoop() }
        monitor.name = "folio-stall-watchdog"
        monitor.start()
    }

    /// How many stalls were seen so far: a mark for `stalls(since:)`.
    public var count: Int { lock.withLock { found.count } }

    /// The stalls seen after `mark`.
    public func stalls(since mark: Int) -> [Stall] { lock.withLock { Array(found.dropFirst(mark)) } }

    /// Each pool that has run its last heartbeat is given another (every 100 ms, from the monitor
    /// thread: a timer on a dispatch queue would itself wait for the global pool, and so report its
    /// stall as every pool's). A pool is late by the time since its heartbeat was handed to it, not
    /// since it last ran one: a monitor that itself ran late (a loaded machine) does not make a
    /// pool that answered at once look stalled.
    private func submitBeats() {
        let now = Self.now()
        let due = lock.withLock {
            pools.filter { pool in
                guard outstanding[pool.name] == nil else { return false }
                outstanding[pool.name] = now
                return true
            }
        }
        for pool in due {
            let name = pool.name
            pool.submit { [self] in beat(name) }
        }
    }

    private func beat(_ pool: String) {
        lock.withLock {
            outstanding[pool] = nil
            stalled.remove(pool)
        }
    }

    private func monitorLoop() {
        while true {
            submitBeats()
            usleep(100_000)
            let late = lock.withLock { () -> [(String, Double)] in
                // Only this thread hands heartbeats out, so each was handed before this clock read.
                let now = Self.now()
                var late: [(String, Double)] = []
                for (pool, handed) in outstanding where !stalled.contains(pool) {
                    let seconds = Double(now - handed) / 1e9
                    if seconds > limit {
                        stalled.insert(pool)
                        late.append((pool, seconds))
                    }
                }
                return late
            }
            for (pool, seconds) in late {
                let stall = Stall(pool: pool, seconds: seconds, threads: Self.threadReport(stacks: stacks))
                let after = Self.now()
                lock.withLock {
                    found.append(stall)
                    // Taking the stacks stopped the whole process for a moment (gdb): that time is
                    // no pool's. Reading the threads' states alone stops nothing, and forgave a
                    // pool blocked meanwhile the time the report took.
                    if stacks {
                        for name in outstanding.keys where !stalled.contains(name) { outstanding[name] = after }
                    }
                }
                if announces { FileHandle.standardError.write(Data((stall.description + "\n").utf8)) }
            }
        }
    }

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Each thread's name, state and kernel wait channel, then, where gdb is installed, every
    /// thread's stack (gdb attaches for a moment; its output goes to a file, since this process is
    /// stopped while it writes).
    static func threadReport(stacks: Bool) -> String {
        var lines: [String] = []
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for tid in tasks.sorted(by: { (Int($0) ?? 0) < (Int($1) ?? 0) }) {
            let base = "/proc/self/task/\(tid)"
            let name = (try? String(contentsOfFile: base + "/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            let wchan = (try? String(contentsOfFile: base + "/wchan", encoding: .utf8)) ?? "?"
            let stat = (try? String(contentsOfFile: base + "/stat", encoding: .utf8)) ?? ""
            let state = stat.lastIndex(of: ")").map { String(stat[stat.index($0, offsetBy: 2)]) } ?? "?"
            lines.append("  \(tid) \(name) \(state) \(wchan)")
        }
        if stacks, let gdb = ["/usr/bin/gdb", "/bin/gdb"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("folio-stall-\(getpid())-\(UUID().uuidString).txt")
            // posix_spawn and waitpid, not Process: Process learns of its child's exit through a
            // dispatch queue, which may be the very thing that stalled.
            let arguments = [gdb, "-p", String(getpid()), "-batch", "-nx", "-ex", "set pagination off", "-ex", "thread apply all bt 25"]
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            var argv = arguments.map { strdup($0) } + [nil]
            var child: pid_t = 0
            if posix_spawn(&child, gdb, &actions, nil, &argv, environ) == 0 {
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            }
            for pointer in argv { free(pointer) }
            posix_spawn_file_actions_destroy(&actions)
            if let stacks = try? String(contentsOf: output, encoding: .utf8) {
                lines.append(stacks.split(separator: "\n").filter { $0.hasPrefix("Thread ") || $0.hasPrefix("#") }.joined(separator: "\n"))
            }
            try? FileManager.default.removeItem(at: output)
        }
        return lines.joined(separator: "\n")
    }
}
