import ArgumentParser
import Folio
import FolioSystem
import Foundation
import SystemPackage

/// `folio open <file>`: opens a document in the app that handles its type — in place, with a grant,
/// when the app declares `LSSupportsOpeningDocumentsInPlace`; else as a copy in the app's Inbox.
struct OpenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open a document in its app: in place (granted) when the app supports it, else a copy in the app's Inbox.")

    @Argument(help: "The document.") var file: String
    @Option(help: "The app to open it in, instead of the type's handler.") var app: String?
    @Flag(help: "Grant read access only (in place).") var readOnly = false
    @Flag(help: "Run the app sandboxed (bubblewrap).") var sandbox = false
    @Flag(help: "Prepare (grant or copy) and print the path the app would get, without starting it.") var noLaunch = false
    /// The browser page prepared the document itself (from the descriptor its check opened): only
    /// start the app with it.
    @Flag(help: .hidden) var prepared = false

    func run() throws {
        let paths = FolioPaths()
        // Resolved once, and beneath its container when it is in an app's: a link an app put there
        // cannot make what is granted or copied a file outside it.
        guard let item = try? ResolvedItem.resolve(URL(fileURLWithPath: file).standardizedFileURL.path, confinedBelow: [paths.containersDirectory]) else {
            printError("folio open: no file \(file)")
            throw ExitCode.failure
        }
        let path = item.path
        let chosen: String
        if let app {
            chosen = app
        } else {
            let handlers = HandlerRegistry(types: TypeRegistry.shared, paths: paths)
            switch try handlers.choice(forItemAt: URL(fileURLWithPath: path))?.handler {
            case .app(let id): chosen = id
            case .desktopEntry(let id): chosen = id
            case nil:
                printError("folio open: no app opens \(file): no Folio app claims its type and no desktop application is associated with it (folio types handlers \(file))")
                throw ExitCode.failure
            }
        }
        // A desktop application (`name.desktop`, from mimeapps.list or the installed ones).
        if chosen.hasSuffix(".desktop") {
            guard let entry = DesktopEntry.find(chosen, paths: paths) else {
                printError("folio open: no desktop application \(chosen) (looked in \(DesktopEntry.folders(paths: paths).joined(separator: ", ")))")
                throw ExitCode.failure
            }
            return try DesktopLaunch.open(path, in: entry, noLaunch: noLaunch)
        }
        guard let manifest = AppManifest.registered(chosen, in: paths.appsDirectory) else {
            printError("folio open: no app \(chosen) is registered")
            throw ExitCode.failure
        }
        let container = AppContainer(appIdentifier: chosen, paths: paths)
        try container.create()
        let handed: String
        if prepared {
            handed = path
        } else if manifest.supportsOpeningDocumentsInPlace {
            try withDaemon("open") { daemon in
                _ = try daemon.send(GrantAdd(app: chosen, path: path, write: !readOnly, persistent: true))
            }
            handed = path
        } else {
            // Through descriptors: the copy is of what was resolved, and a new document (no identity).
            do {
                let inbox = try ResolvedItem.resolve(container.inboxURL.path)
                let name = (AvailableName.path(for: (path as NSString).lastPathComponent, in: inbox.path) as NSString).lastPathComponent
                handed = try item.copy(into: inbox, named: name).path
            } catch {
                printError("folio open: cannot copy \(file) into \(chosen)'s Inbox: \(error)")
                throw ExitCode.failure
            }
        }
        if noLaunch {
            print(handed)
            return
        }
        guard let executable = manifest.executable else {
            printError("folio open: \(chosen)'s manifest names no CFBundleExecutable to start; the document is at \(handed)")
            throw ExitCode.failure
        }
        let status = try AppLauncher(app: chosen, paths: paths).run([executable, handed], sandbox: sandbox)
        if status != 0 { throw ExitCode(status) }
    }
}
