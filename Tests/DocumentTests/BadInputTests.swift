@testable import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A document whose model is JSON: truncated or malformed contents fail to load.
final class JSONDocument: Document, @unchecked Sendable {
    private(set) var value: [String: String] = [:]
    private(set) var errors: [String] = []

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data, let object = try JSONSerialization.jsonObject(with: data) as? [String: String] else {
            throw CocoaError(.fileReadCorruptFile)
        }
        value = object
    }

    override func contents(forType typeName: String) throws -> Any {
        try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
    }

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        errors.append("\((error as NSError).code)")
        super.handleError(error, userInteractionPermitted: userInteractionPermitted)
    }

    func set(_ key: String, _ text: String) {
        value[key] = text
        updateChangeCount(.done)
    }
}

extension DocumentWorld {
    func jsonDocument(_ url: URL) -> JSONDocument {
        CoordinationEngine.$override.withValue(engine) { VersionStore.$override.withValue(store) { JSONDocument(fileURL: url) } }
    }
}

@Suite("Document: bad input", .elasticPool)
struct BadInputTests {
    @Test func missingAndTruncatedFilesFailToOpenAndTheDocumentStaysUsable() async throws {
        let world = try DocumentWorld()
        let url = world.url("settings.json")
        let document = world.jsonDocument(url)
        #expect(await document.open() == false)
        #expect(document.documentState == .closed)
        #expect(document.errors == ["\(CocoaError.Code.fileReadNoSuchFile.rawValue)"])
        try Data(#"{"theme": "da"#.utf8).write(to: url)  // truncated
        #expect(await document.open() == false)
        #expect(document.documentState == .closed)
        try Data(#"{"theme": "dark"}"#.utf8).write(to: url)
        #expect(await document.open())
        #expect(document.value == ["theme": "dark"] && document.documentState == .normal)
    }

    @Test func aVanishedFolderGivesASavingErrorThatClearsOnce() async throws {
        let world = try DocumentWorld()
        let folder = world.url("Project")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("config.json")
        try Data("{}".utf8).write(to: url)
        let document = world.jsonDocument(url)
        #expect(await document.open())
        document.set("name", "Folio")
        try FileManager.default.removeItem(at: folder)
        #expect(await document.save(to: url, for: .forOverwriting) == false)
        #expect(document.documentState.contains(.savingError))
        #expect(document.hasUnsavedChanges, "nothing is forgotten")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(await document.save(to: url, for: .forOverwriting))
        #expect(!document.documentState.contains(.savingError))
        #expect(try String(contentsOf: url, encoding: .utf8) == #"{"name":"Folio"}"#)
    }

    @Test func aFileDeletedBehindTheDocumentsBackIsWrittenAgain() async throws {
        let world = try DocumentWorld()
        let url = try world.file("list.json", #"{"a":"1"}"#)
        let document = world.jsonDocument(url)
        #expect(await document.open())
        document.set("b", "2")
        try FileManager.default.removeItem(at: url)
        #expect(await document.autosave())
        #expect(try String(contentsOf: url, encoding: .utf8) == #"{"a":"1","b":"2"}"#)
    }

    /// Permissions, as another user (the tests may run as root, which permissions do not stop).
    @Test func unreadableAndUnwritableFilesAsAnotherUser() async throws {
        guard getuid() == 0, let setpriv = ProcessRunner.which("setpriv") else {
            // Not root: ordinary permissions apply to this process itself.
            let world = try DocumentWorld()
            let url = try world.file("secret.txt", "hidden")
            chmod(url.path, 0o000)
            let document = world.document(url)
            let ok = await document.open()
            #expect(!ok && document.documentState == .closed)
            return
        }
        let root = URL(fileURLWithPath: "/tmp/folio-nobody-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        defer { try? FileManager.default.removeItem(at: root) }
        let secret = root.appendingPathComponent("secret.txt")
        try Data("hidden".utf8).write(to: secret)
        chmod(secret.path, 0o000)
        let locked = root.appendingPathComponent("Locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let readOnly = locked.appendingPathComponent("readonly.txt")
        try Data("look, don't touch".utf8).write(to: readOnly)
        chmod(readOnly.path, 0o644)

        var environment = ProcessInfo.processInfo.environment
        for key in ["XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "HOME"] {
            environment[key] = root.appendingPathComponent(key).path
        }
        environment["FOLIO_COORDINATION"] = "local"
        let child = Process()
        child.executableURL = URL(fileURLWithPath: setpriv)
        child.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", ProcessRunner.builtExecutable("FolioCoordinationHelper").path]
        child.environment = environment
        let input = Pipe(), output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()
        let commands = [
            #"{"op":"document-open","name":"secret","path":"\#(secret.path)"}"#,
            #"{"op":"document-open","name":"ro","path":"\#(readOnly.path)"}"#,
        ]
        try input.fileHandleForWriting.write(contentsOf: Data((commands.joined(separator: "\n") + "\n").utf8))
        var text = ""
        while !(text.contains(#""name":"secret""#) && text.contains(#""what":"opened""#) && text.components(separatedBy: #""what":"opened""#).count > 2) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let edit = #"{"op":"document-edit","name":"ro","text":"changed"}"# + "\n" + #"{"op":"document-save","name":"ro"}"# + "\n"
        try input.fileHandleForWriting.write(contentsOf: Data(edit.utf8))
        while !text.contains(#""what":"saved""#) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        let lines = text.split(separator: "\n").compactMap { try? WireValue(parsing: Array($0.utf8)) }
        let opened = lines.filter { $0["what"]?.stringValue == "opened" }
        #expect(opened.count == 2, "\(text)")
        #expect(opened.first { $0["name"]?.stringValue == "secret" }?["ok"]?.boolValue == false, "\(text)")
        #expect(opened.first { $0["name"]?.stringValue == "ro" }?["ok"]?.boolValue == true, "\(text)")
        let saved = lines.first { $0["what"]?.stringValue == "saved" }
        #expect(saved?["ok"]?.boolValue == false)
        #expect(((saved?["state"]?.intValue).map { UInt($0) } ?? 0) & Document.State.savingError.rawValue != 0)
        #expect(try String(contentsOf: readOnly, encoding: .utf8) == "look, don't touch")
    }
}
