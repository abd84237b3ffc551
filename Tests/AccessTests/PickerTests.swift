import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The document picker end to end: apps (real processes) ask, the daemon runs the picker, the
/// scripted front end answers, and each mode does what apple-semantics §5.1 says (§9 46).
@Suite("Document picker modes with two apps (§9 46)", .serialized, .elasticPool)
struct PickerTests {
    let alpha = IsolationFixture.alpha
    let beta = IsolationFixture.beta

    private func text(_ url: String) -> String? { try? String(contentsOfFile: url, encoding: .utf8) }

    /// Open: the original, security-scoped, edited in place; a reference document in the container;
    /// the other app still cannot reach it; the grant ends with the app.
    @Test func openHandsOutTheOriginalScoped() throws {
        let world = try IsolationFixture("picker-open")
        let original = try world.dir.write("home/Documents/notes.txt", "hello")
        let picker = try world.scriptedPicker([[original.path]])
        let result = try world.app(alpha, ["pick", "open", "--type", "public.plain-text", "--write", "edited in place"])
        let shown = picker.stop()
        #expect(result["ok"]?.boolValue == true, "\(result)")
        let item = try #require(result["urls"]?.arrayValue?.first)
        #expect(item["path"]?.stringValue == original.path)
        #expect(item["started"]?.boolValue == true)
        #expect(item["text"]?.stringValue == "hello")
        #expect(item["wrote"]?.boolValue == true)
        #expect(text(original.path) == "edited in place")
        let references = try FileManager.default.contentsOfDirectory(atPath: world.container(alpha).referencesURL.path)
        #expect(references.count == 1 && references[0].hasSuffix(".json"))
        #expect(shown.count == 1 && shown[0]["app"]?.stringValue == alpha && shown[0]["params"]?["mode"]?.stringValue == "open")

        let other = try world.app(beta, ["read", original.path])
        #expect(other["ok"]?.boolValue == false && other["posix"]?.intValue == Int64(EACCES), "\(other)")
        // The picker's grant lasted as long as the app's process.
        let later = try world.app(alpha, ["read", original.path])
        #expect(later["ok"]?.boolValue == false, "\(later)")
    }

    /// Open as copy (import): a private copy in the app's tmp; editing it leaves the original; the
    /// copy goes when the app exits.
    @Test func importHandsOutAPrivateCopy() throws {
        let world = try IsolationFixture("picker-import")
        let original = try world.dir.write("home/Documents/notes.txt", "hello")
        let picker = try world.scriptedPicker([[original.path]])
        let result = try world.app(alpha, ["pick", "import", "--type", "public.text", "--write", "my copy"])
        _ = picker.stop()
        let item = try #require(result["urls"]?.arrayValue?.first, "\(result)")
        let copy = try #require(item["path"]?.stringValue)
        #expect(copy != original.path && copy.hasPrefix(world.container(alpha).temporaryURL.path + "/Imports/"))
        #expect(item["started"]?.boolValue == false, "a copy carries no security scope")
        #expect(item["text"]?.stringValue == "hello" && item["wrote"]?.boolValue == true)
        #expect(text(original.path) == "hello")
        // Nor can the other app reach the original through this pick.
        #expect(try world.app(beta, ["read", original.path])["posix"]?.intValue == Int64(EACCES))
        let deadline = Date().addingTimeInterval(5)
        while FileManager.default.fileExists(atPath: copy), Date() < deadline { usleep(20_000) }
        #expect(!FileManager.default.fileExists(atPath: copy), "the imported copy outlived the app")
    }

    /// Export: copies in the folder the user chose (a free name when taken), the source stays; the
    /// legacy `init(urls:in: .exportToService)` does the same.
    @Test func exportCopiesOutAndLeavesTheSource() throws {
        let world = try IsolationFixture("picker-export")
        let source = world.container(alpha).documentsURL.appendingPathComponent("report.txt")
        try Data("quarterly".utf8).write(to: source)
        let destination = try world.dir.write("home/Shared/report.txt", "someone else's").deletingLastPathComponent()
        let picker = try world.scriptedPicker([[destination.path], [destination.path]])
        let first = try world.app(alpha, ["pick", "export", "--url", source.path])
        let second = try world.app(alpha, ["pick", "legacy-export", "--url", source.path])
        _ = picker.stop()
        #expect(first["urls"]?.arrayValue?.first?["path"]?.stringValue == destination.path + "/report 2.txt", "\(first)")
        #expect(second["urls"]?.arrayValue?.first?["path"]?.stringValue == destination.path + "/report 3.txt", "\(second)")
        #expect(first["urls"]?.arrayValue?.first?["started"]?.boolValue == true)
        #expect(text(destination.path + "/report 2.txt") == "quarterly")
        #expect(text(destination.path + "/report.txt") == "someone else's")
        #expect(text(source.path) == "quarterly")
        // The other app cannot reach the copies.
        #expect(try world.app(beta, ["read", destination.path + "/report 2.txt"])["posix"]?.intValue == Int64(EACCES))
    }

    /// Picking a folder grants everything inside it, including what is added later.
    @Test func pickingAFolderGrantsItsContents() throws {
        let world = try IsolationFixture("picker-folder")
        let folder = world.dir.child("home/Project")
        let existing = try world.dir.write("home/Project/a.txt", "a")
        let picker = try world.scriptedPicker([[folder.path]])
        let picked = try world.app(alpha, ["pick", "open", "--type", "public.folder", "--bookmark"])
        _ = picker.stop()
        let item = try #require(picked["urls"]?.arrayValue?.first, "\(picked)")
        #expect(item["path"]?.stringValue == folder.path && item["started"]?.boolValue == true)
        let bookmark = try #require(item["bookmark"]?.stringValue)
        let later = try world.dir.write("home/Project/sub/later.txt", "later")
        #expect(try world.app(alpha, ["resolve", bookmark])["path"]?.stringValue == folder.path)
        #expect(try world.app(alpha, ["read", existing.path])["text"]?.stringValue == "a")
        #expect(try world.app(alpha, ["read", later.path])["text"]?.stringValue == "later")
        #expect(try world.app(alpha, ["check", folder.path + "/new/deeper/created.txt", "--write"])["allowed"]?.boolValue == true)
        #expect(try world.app(beta, ["read", later.path])["posix"]?.intValue == Int64(EACCES))
    }

    /// The terminal picker, on its own: filter, choose, print the path; cancel exits 1.
    @Test func terminalPicker() throws {
        let world = try IsolationFixture("picker-terminal")
        try world.dir.write("home/Docs/alpha.txt", "a")
        let beta = try world.dir.write("home/Docs/beta.txt", "b")
        try world.dir.write("home/Docs/gamma.png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        func pick(_ input: String, _ arguments: [String]) throws -> (Int32, String, String) {
            let process = Process()
            process.executableURL = ProcessRunner.folioExecutable()
            process.arguments = ["pick"] + arguments
            process.environment = world.environment
            let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = stderr
            try process.run()
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
            let out = stdout.fileHandleForReading.readDataToEndOfFile()
            let err = stderr.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
        }
        let docs = world.dir.path + "/home/Docs"
        let (status, out, err) = try pick("/bet\n1\n", ["--directory", docs, "--type", "public.text"])
        #expect(status == 0 && out == beta.path + "\n", "\(out) \(err)")
        #expect(!err.contains("gamma"), "a PNG was offered for public.text: \(err)")
        let several = try pick("1,2\n", ["--directory", docs, "--type", "txt", "--multiple"])
        #expect(several.1.split(separator: "\n").count == 2, "\(several)")
        let cancelled = try pick("c\n", ["--directory", docs])
        #expect(cancelled.0 == 1 && cancelled.2.contains("folio pick: cancelled"), "\(cancelled.2)")
        let ended = try pick("", ["--directory", docs])
        #expect(ended.0 == 1 && ended.2.contains("the input ended before a choice"), "end of input cancels, and says so: \(ended.2)")
    }

    /// Move: the document moves to the chosen folder, scoped, with a reference document left in the
    /// app's container.
    @Test func moveMovesAndLeavesAReference() throws {
        let world = try IsolationFixture("picker-move")
        let source = world.container(alpha).documentsURL.appendingPathComponent("draft.txt")
        try Data("moving".utf8).write(to: source)
        let destination = world.dir.child("home/Archive")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        let picker = try world.scriptedPicker([[destination.path]])
        let result = try world.app(alpha, ["pick", "legacy-move", "--url", source.path, "--write", "moved and edited"])
        _ = picker.stop()
        let item = try #require(result["urls"]?.arrayValue?.first, "\(result)")
        #expect(item["path"]?.stringValue == destination.path + "/draft.txt")
        #expect(item["started"]?.boolValue == true && item["wrote"]?.boolValue == true)
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(text(destination.path + "/draft.txt") == "moved and edited")
        #expect(try FileManager.default.contentsOfDirectory(atPath: world.container(alpha).referencesURL.path).count == 1)
        #expect(try world.app(beta, ["read", destination.path + "/draft.txt"])["posix"]?.intValue == Int64(EACCES))
    }

    /// The picker's move is coordinated: a presenter of the document in another process follows it.
    @Test func movesTellPresentersWhereTheirDocumentWent() throws {
        let world = try IsolationFixture("picker-move-presenter")
        let source = world.container(alpha).documentsURL.appendingPathComponent("shown.txt")
        try Data("presented".utf8).write(to: source)
        let destination = world.dir.child("home/Elsewhere")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)

        var environment = world.environment
        environment["FOLIO_COORDINATION"] = "daemon"
        let presenter = Process()
        presenter.executableURL = ProcessRunner.builtExecutable("FolioCoordinationHelper")
        presenter.environment = environment
        let input = Pipe(), output = Pipe()
        presenter.standardInput = input
        presenter.standardOutput = output
        try presenter.run()
        defer { presenter.terminate() }
        let lines = LineCollector(output.fileHandleForReading)
        input.fileHandleForWriting.write(Data(#"{"op":"presenter","name":"viewer","path":"\#(source.path)"}"#.utf8 + [0x0A]))
        #expect(lines.wait { $0["event"]?.stringValue == "added" } != nil)

        let picker = try world.scriptedPicker([[destination.path]])
        let moved = try world.app(alpha, ["pick", "move", "--url", source.path])
        _ = picker.stop()
        #expect(moved["urls"]?.arrayValue?.first?["path"]?.stringValue == destination.path + "/shown.txt", "\(moved)")
        let heard = lines.wait { $0["callback"]?.stringValue == "didMove" }
        #expect(heard?["to"]?.stringValue == destination.path + "/shown.txt", "\(lines.all)")
        // Coordinated, not merely noticed afterwards: the presenter was asked to relinquish first.
        #expect(lines.all.contains { $0["callback"]?.stringValue == "relinquishToWriter" }, "\(lines.all)")
    }

    /// Cancelling reaches the app as `userCancelled`; a choice of the wrong type, or from another
    /// app's container, is refused by the daemon (and the script then cancels); several items need
    /// `allowsMultipleSelection`; without a front end the picker fails clearly.
    @Test func cancelsRefusalsAndMultipleSelection() throws {
        let world = try IsolationFixture("picker-rules")
        let text1 = try world.dir.write("home/a.txt", "a")
        let text2 = try world.dir.write("home/b.txt", "b")
        let image = try world.dir.write("home/c.png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        let secret = world.container(beta).documentsURL.appendingPathComponent("secret.txt")
        try Data("beta's".utf8).write(to: secret)

        let none = try world.app(alpha, ["pick", "open"])
        #expect(none["ok"]?.boolValue == false && none["code"]?.intValue == Int64(CocoaError.featureUnsupported.rawValue), "\(none)")

        let picker = try world.scriptedPicker([nil, [image.path], [secret.path], [text1.path, text2.path], [text1.path, text2.path]])
        let cancelled = try world.app(alpha, ["pick", "open", "--present"])
        #expect(cancelled["code"]?.intValue == Int64(CocoaError.userCancelled.rawValue), "\(cancelled)")
        let wrongType = try world.app(alpha, ["pick", "open", "--type", "public.plain-text"])
        #expect(wrongType["code"]?.intValue == Int64(CocoaError.userCancelled.rawValue), "\(wrongType)")
        let otherContainer = try world.app(alpha, ["pick", "open"])
        #expect(otherContainer["code"]?.intValue == Int64(CocoaError.userCancelled.rawValue), "\(otherContainer)")
        let single = try world.app(alpha, ["pick", "legacy-open", "--type", "public.text"])
        #expect(single["code"]?.intValue == Int64(CocoaError.userCancelled.rawValue), "\(single)")
        let multiple = try world.app(alpha, ["pick", "open", "--multiple", "--present"])
        #expect(multiple["urls"]?.arrayValue?.compactMap { $0["path"]?.stringValue } == [text1.path, text2.path], "\(multiple)")
        #expect(picker.stop().count == 5)
        #expect(try String(contentsOf: secret, encoding: .utf8) == "beta's")
    }
}

/// Lines of JSON from a pipe, collected by a thread; `wait` polls for one that matches.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [WireValue] = []

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer += chunk
                while let newline = buffer.firstIndex(of: 0x0A) {
                    if let value = try? WireValue(parsing: Array(buffer[..<newline])) { lock.withLock { lines.append(value) } }
                    buffer.removeSubrange(...newline)
                }
            }
        }
    }

    var all: [WireValue] { lock.withLock { lines } }

    func wait(timeout: TimeInterval = 10, for match: (WireValue) -> Bool) -> WireValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = all.first(where: match) { return found }
            usleep(20_000)
        }
        return nil
    }
}
