// Samples 35–37: the document picker as Apple's code presents it, in both of its shapes. A person's
// choice is made by the scripted picker front end (`folio pick --serve --script`) attached to a
// private daemon; the picker itself runs in that daemon, as on iOS it runs out of the app's process.
// - 35–36: UIKit's article "Providing access to directories": a picker for folders that starts
//   in a given folder (`directoryURL`), then the delegate reads the chosen folder: security scope
//   started, a coordinated read, the folder's contents enumerated with `FileManager`, each
//   file's access started (the article starts the folder's URL again there, as quoted).
// - 37: the iOS 8 shape, `init(documentTypes:in:)` with `.import`, and the iOS 8 delegate method
//   `documentPicker(_:didPickDocumentAt:)` (deprecated since iOS 11, still called by UIKit when a
//   delegate implements only it), from `UIDocumentPickerViewController`'s reference.
//
// Lines changed from Apple's: `import UIKit` → `import Folio` (+ Foundation); the view
// controllers are plain classes; `present(documentPicker, animated: true, completion: nil)` (a
// UIKit call) → `documentPicker.present()`; `Swift.debugPrint` and the "Do something with the
// file here" / "Handle the failure here" comments → a record of what happened, for the test.
// `UIDocumentPickerViewController` and `UIDocumentPickerDelegate` are PortSupport's aliases.
import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

final class DirectoryPickerViewController: UIDocumentPickerDelegate, @unchecked Sendable {
    let startingDirectory: URL
    let lock = NSLock()
    var chosen: [String] = []
    var failures: [String] = []
    var finished = false

    init(startingDirectory: URL) { self.startingDirectory = startingDirectory }

    // Sample 35: ask the user to select a directory.
    func askForADirectory() {
        // Create a document picker for directories.
        let documentPicker =
            UIDocumentPickerViewController(forOpeningContentTypes: [.folder])
        documentPicker.delegate = self

        // Set the initial directory.
        documentPicker.directoryURL = startingDirectory

        // Present the document picker.
        documentPicker.present()
    }

    // Sample 36: access the directory's content.
    func documentPicker(_ controller: UIDocumentPickerViewController, didPickDocumentsAt urls: [URL]) {
        defer { lock.withLock { finished = true } }
        guard let url = urls.first else { return }
        // Start accessing a security-scoped resource.
        guard url.startAccessingSecurityScopedResource() else {
            // Handle the failure here.
            lock.withLock { failures.append("no access to \(url.path)") }
            return
        }

        // Make sure you release the security-scoped resource when you finish.
        defer { url.stopAccessingSecurityScopedResource() }

        // Use file coordination for reading and writing any of the URL's content.
        var error: NSError? = nil
        NSFileCoordinator().coordinate(readingItemAt: url, error: &error) { (url) in

            let keys : [URLResourceKey] = [.nameKey, .isDirectoryKey]

            // Get an enumerator for the directory's content.
            guard let fileList =
                FileManager.default.enumerator(at: url, includingPropertiesForKeys: keys) else {
                lock.withLock { failures.append("*** Unable to access the contents of \(url.path) ***") }
                return
            }

            for case let file as URL in fileList {
                // Start accessing the content's security-scoped URL.
                guard url.startAccessingSecurityScopedResource() else {
                    // Handle the failure here.
                    lock.withLock { failures.append("no access to \(file.path)") }
                    continue
                }

                // Do something with the file here.
                lock.withLock { chosen.append(file.lastPathComponent) }

                // Make sure you release the security-scoped resource when you finish.
                url.stopAccessingSecurityScopedResource()
            }
        }
        if let error { lock.withLock { failures.append("coordination failed: \(error)") } }
    }

    func documentPickerWasCancelled(_ controller: UIDocumentPickerViewController) {
        lock.withLock { finished = true }
    }
}

final class LegacyImportViewController: UIDocumentPickerDelegate, @unchecked Sendable {
    let lock = NSLock()
    var imported: [URL] = []
    var modes: [UIDocumentPickerMode] = []

    // Sample 37: the iOS 8 shape, importing a copy of a document of the given types.
    func importDocument() {
        let documentPicker = UIDocumentPickerViewController(documentTypes: ["public.plain-text"], in: .import)
        documentPicker.delegate = self
        documentPicker.present()
    }

    func documentPicker(_ controller: UIDocumentPickerViewController, didPickDocumentAt url: URL) {
        lock.withLock {
            modes.append(controller.documentPickerMode)
            imported.append(url)
        }
    }
}

/// A private daemon with the scripted picker front end attached.
private final class PickerWorld: @unchecked Sendable {
    let directory: TemporaryDirectory
    let daemon: DaemonProcess
    let frontEnd: Process
    let shown = Pipe()
    let engine: DaemonCoordinationEngine

    /// `answers`: the paths the person chooses, one list per request.
    init(_ name: String, answers: [[String]]) throws {
        directory = try TemporaryDirectory("port-" + name)
        let environment = directory.xdgEnvironment()
        daemon = try DaemonProcess(environment: environment)
        let socket = FolioPaths(environment: environment).socketPath
        let deadline = Date().addingTimeInterval(20)
        while access(socket, F_OK) != 0, Date() < deadline { usleep(20_000) }
        let script = directory.child("answers.json")
        let list = WireValue.array(answers.map { ["paths": .array($0.map { .string($0) })] })
        try Data(list.serialized()).write(to: script)
        frontEnd = Process()
        frontEnd.executableURL = ProcessRunner.folioExecutable()
        frontEnd.arguments = ["pick", "--serve", "--script", script.path]
        frontEnd.environment = environment
        frontEnd.standardOutput = shown
        let errors = Pipe()
        frontEnd.standardError = errors
        try frontEnd.run()
        var said = ""
        while !said.contains("serving the document picker") {
            let chunk = errors.fileHandleForReading.availableData
            guard !chunk.isEmpty, Date() < deadline else { throw TestFailure("the picker front end did not attach: \(said)") }
            said += String(decoding: chunk, as: UTF8.self)
        }
        engine = try DaemonCoordinationEngine(socketPath: socket, app: nil)
    }

    /// Stops the front end and the daemon; returns the requests the front end was shown.
    func stop() -> [WireValue] {
        engine.disconnect()
        frontEnd.terminate()
        frontEnd.waitUntilExit()
        _ = daemon.stop()
        let data = shown.fileHandleForReading.readDataToEndOfFile()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? WireValue(parsing: Array($0.utf8)) }
    }
}

@Suite("Apple's samples: the document picker (both shapes)", .elasticPool)
struct DocumentPickerSampleTests {
    /// The person picks a folder in the picker that starts where the app asked; the delegate reads
    /// every file inside through a coordinated read with the folder's security scope.
    @Test func aChosenFolderIsReadWithItsScope() async throws {
        let scratch = try TemporaryDirectory("port-picker-folder-tree")
        let projects = try scratch.write("Projects/Garden/plan.txt", "beans").deletingLastPathComponent()
        _ = try scratch.write("Projects/Garden/budget.txt", "12")
        let world = try PickerWorld("picker-folder", answers: [[projects.path]])
        let controller = DirectoryPickerViewController(startingDirectory: scratch.child("Projects"))
        await CoordinationEngine.$override.withValue(world.engine) {
            controller.askForADirectory()
            #expect(await eventually(20) { controller.lock.withLock { controller.finished } })
        }
        let shown = world.stop()
        #expect(controller.lock.withLock { controller.failures } == [])
        #expect(controller.lock.withLock { controller.chosen.sorted() } == ["budget.txt", "plan.txt"])
        let params = try #require(shown.first?["params"], "\(shown)")
        #expect(params["mode"]?.stringValue == "open")
        #expect(params["types"]?.arrayValue?.compactMap(\.stringValue) == ["public.folder"])
        #expect(params["directory"]?.stringValue == scratch.child("Projects").path)
    }

    /// The iOS 8 shape imports a copy, and a delegate that implements only the iOS 8 method hears
    /// of it there, with the picker's mode.
    @Test func theIOS8ShapeImportsACopyToTheOldDelegateMethod() async throws {
        let scratch = try TemporaryDirectory("port-picker-import-source")
        let original = try scratch.write("notes.txt", "from the picker")
        let world = try PickerWorld("picker-import", answers: [[original.path]])
        let controller = LegacyImportViewController()
        await CoordinationEngine.$override.withValue(world.engine) {
            controller.importDocument()
            #expect(await eventually(20) { controller.lock.withLock { !controller.imported.isEmpty } })
        }
        let shown = world.stop()
        let imported = try #require(controller.lock.withLock { controller.imported.first })
        #expect(imported.path != original.path)
        #expect(imported.lastPathComponent == "notes.txt")
        #expect(controller.lock.withLock { controller.modes } == [.import])
        #expect(shown.first?["params"]?["mode"]?.stringValue == "import")
        #expect(shown.first?["params"]?["types"]?.arrayValue?.compactMap(\.stringValue) == ["public.plain-text"])
    }
}
