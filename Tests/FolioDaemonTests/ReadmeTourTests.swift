import Foundation
import FolioTesting
import FolioTestTraits
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// README's five-minute tour, run as a reader would paste it: every command of its `sh` block in
/// order, in one shell, at the top of the package, with an empty home folder; each command must
/// succeed and print what the `#>` lines after it say.
@Suite("README's tour", .elasticPool)
struct ReadmeTourTests {
    /// One command of the tour and the texts its output must hold.
    struct Step {
        var command: String
        var expected: [String] = []
    }

    /// The package's top folder.
    static var root: URL {
        var root = URL(fileURLWithPath: #filePath)
        while root.path != "/" && !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) {
            root.deleteLastPathComponent()
        }
        return root
    }

    /// The steps of the `sh` block under "## A five-minute tour".
    static func steps(ofReadme text: String) throws -> [Step] {
        guard let section = text.range(of: "## A five-minute tour") else { throw TestFailure("README has no tour section") }
        let rest = text[section.upperBound...]
        guard let open = rest.range(of: "```sh\n"), let close = rest[open.upperBound...].range(of: "\n```") else {
            throw TestFailure("the tour has no sh block")
        }
        var steps: [Step] = []
        for line in rest[open.upperBound..<close.lowerBound].split(separator: "\n") {
            if line.hasPrefix("#> ") {
                guard !steps.isEmpty else { throw TestFailure("an expected output before any command: \(line)") }
                steps[steps.count - 1].expected.append(String(line.dropFirst(3)))
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                steps.append(Step(command: String(line)))
            }
        }
        return steps
    }

    /// Where the tour's home keeps Folio's folders: the XDG defaults under it, or folders of its
    /// own, as many desktops and every container set them.
    enum Folders: String, CaseIterable, Sendable {
        case defaults, custom
    }

    /// The tour with stub files (`--files stubs` added to its `drive setup`).
    @Test(arguments: Folders.allCases)
    func theTourHoldsWithStubs(_ folders: Folders) throws {
        try runTour(folders: folders, files: "stubs")
    }

    /// The tour with files on demand (the daemon mounts the drive's folder with FUSE).
    @Test(.enabled(if: Self.fuseMounts, "needs /dev/fuse, and root or fusermount3"), arguments: Folders.allCases)
    func theTourHoldsOnDemand(_ folders: Folders) throws {
        try runTour(folders: folders, files: "on-demand")
    }

    /// Whether this machine lets the daemon mount the drive's folder.
    static let fuseMounts = access("/dev/fuse", R_OK | W_OK) == 0 && (geteuid() == 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/fusermount3"))

    /// Runs the tour's steps in one shell on an empty home, the drive's files as `files` says, and
    /// checks that each succeeds and prints what its `#>` lines say.
    func runTour(folders: Folders, files: String) throws {
        let steps = try Self.steps(ofReadme: String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8))
        #expect(steps.count >= 15)
        // The first line builds and puts the build on PATH: the test run's own build stands in for
        // `swift build` (a build inside the test run would relink what is running).
        let build = #"swift build && export PATH="$PWD/.build/debug:$PATH""#
        try #require(steps.first?.command == build, "the tour's first line changed: \(steps.first?.command ?? "none")")
        let setup = try #require(steps.firstIndex { $0.command.hasPrefix("folio drive setup ") }, "the tour sets up no drive")
        let binaries = ProcessRunner.folioExecutable().deletingLastPathComponent().path

        let home = try TemporaryDirectory("readme-tour")
        let runtime = home.child("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("FOLIO_") || name.hasPrefix("XDG_") || name == "DBUS_SESSION_BUS_ADDRESS" {
            environment[name] = nil
        }
        environment["HOME"] = home.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        if folders == .custom {
            environment["XDG_DATA_HOME"] = home.path + "/xdg/data"
            environment["XDG_CONFIG_HOME"] = home.path + "/xdg/config"
            environment["XDG_STATE_HOME"] = home.path + "/xdg/state"
        }
        defer {
            // A tour that failed midway leaves its daemon running: stopped here whatever happened.
            _ = try? ProcessRunner.run(URL(fileURLWithPath: "\(binaries)/folio"), ["daemon", "--stop"], environment: environment)
        }

        // One shell for all the steps (the PATH and the background daemon carry over), each
        // step's output between markers with its status.
        var script = "cd \(Self.root.path.shellQuoted)\n"
        for (index, step) in steps.enumerated() {
            var command = index == 0 ? "export PATH=\(binaries.shellQuoted):\"$PATH\"" : step.command
            if index == setup { command += " --files \(files)" }
            script += "printf '\\n@@step %d\\n' \(index)\n{\n\(command)\n} 2>&1\nprintf '\\n@@status %d %d\\n' \(index) $?\n"
        }
        let scriptFile = home.child("tour.sh")
        try script.write(to: scriptFile, atomically: true, encoding: .utf8)
        let run = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/timeout"), ["600", "/bin/bash", scriptFile.path], environment: environment)
        #expect(run.status == 0, "the tour's shell: \(run.stderr)")

        for (index, step) in steps.enumerated() {
            guard let start = run.stdout.range(of: "\n@@step \(index)\n"), let end = run.stdout.range(of: "\n@@status \(index) ", range: start.upperBound..<run.stdout.endIndex) else {
                Issue.record("step \(index) (\(step.command)) did not run; the tour printed:\n\(run.stdout)")
                break
            }
            let output = String(run.stdout[start.upperBound..<end.lowerBound])
            let status = run.stdout[end.upperBound...].prefix { $0 != "\n" }
            #expect(status == "0", "`\(step.command)` failed (\(status)):\n\(output)")
            for expected in step.expected {
                let text = expected.replacingOccurrences(of: "~/", with: home.path + "/")
                #expect(output.contains(text), "`\(step.command)` printed no \(text.debugDescription):\n\(output)")
            }
            // The drive's files are as the mode says: on demand, the daemon has mounted the folder
            // by the time setup returns.
            if index == setup {
                let mode = files == "stubs" ? "files: stubs" : "files: on demand: the daemon has mounted "
                #expect(output.contains(mode), "`\(step.command) --files \(files)` printed no \(mode.debugDescription):\n\(output)")
            }
        }
    }

    /// The parser reads commands and what each must print, and refuses a block without commands.
    @Test func stepsAreReadFromTheBlock() throws {
        let readme = "# x\n## A five-minute tour\ntext\n```sh\na one\n#> first\n#> second\n\nb two\n```\nafter\n"
        let steps = try Self.steps(ofReadme: readme)
        #expect(steps.map(\.command) == ["a one", "b two"])
        #expect(steps.map(\.expected) == [["first", "second"], []])
        #expect(throws: TestFailure.self) { try Self.steps(ofReadme: "## A five-minute tour\n```sh\n#> orphan\n```\n") }
        #expect(throws: TestFailure.self) { try Self.steps(ofReadme: "no tour here") }
    }
}

extension String {
    /// The string in single quotes for a POSIX shell.
    fileprivate var shellQuoted: String { "'" + replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
