import Foundation
import FolioTesting
import FolioTestTraits
import Testing

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

    @Test func theTourDoesWhatItSays() throws {
        let steps = try Self.steps(ofReadme: String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8))
        #expect(steps.count >= 15)
        // The first line builds and puts the build on PATH: the test run's own build stands in for
        // `swift build` (a build inside the test run would relink what is running).
        let build = #"swift build && export PATH="$PWD/.build/debug:$PATH""#
        try #require(steps.first?.command == build, "the tour's first line changed: \(steps.first?.command ?? "none")")
        let binaries = ProcessRunner.folioExecutable().deletingLastPathComponent().path

        let home = try TemporaryDirectory("readme-tour")
        let runtime = home.child("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("FOLIO_") || ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "DBUS_SESSION_BUS_ADDRESS"].contains(name) {
            environment[name] = nil
        }
        environment["HOME"] = home.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        defer {
            // A tour that failed midway leaves its daemon running: stopped here whatever happened.
            _ = try? ProcessRunner.run(URL(fileURLWithPath: "\(binaries)/folio"), ["daemon", "--stop"], environment: environment)
        }

        // One shell for all the steps (the PATH and the background daemon carry over), each
        // step's output between markers with its status.
        var script = "cd \(Self.root.path.shellQuoted)\n"
        for (index, step) in steps.enumerated() {
            let command = index == 0 ? "export PATH=\(binaries.shellQuoted):\"$PATH\"" : step.command
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
