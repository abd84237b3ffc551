import ArgumentParser
import Folio
import Foundation

/// `folio app`: register apps (their manifests: Info.plist keys) and make their containers.
struct AppCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Register, list and unregister apps; each gets a container.",
        subcommands: [Register.self, List.self, Unregister.self],
        aliases: ["apps"]
    )

    /// `folio app register <manifest>`.
    struct Register: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register",
            abstract: "Register an app from its manifest (XML or binary Info.plist, or JSON with the same keys) and make its container.",
            aliases: ["install"])

        @Argument(help: "The manifest file.")
        var manifest: String

        func run() throws {
            let paths = FolioPaths()
            let url = URL(fileURLWithPath: manifest)
            let parsed: AppManifest
            let data: Data
            do {
                parsed = try AppManifest(contentsOf: url)
                data = try Data(contentsOf: url)
            } catch {
                printError("folio: refused \(manifest): \(error)")
                throw ExitCode.failure
            }
            let handlers = HandlerRegistry(types: TypeRegistry.shared, paths: paths)
            let container = AppContainer(appIdentifier: parsed.bundleIdentifier, paths: paths)
            do {
                try handlers.install(parsed)
                try FileManager.default.createDirectory(atPath: paths.appsDirectory, withIntermediateDirectories: true)
                let suffix = data.first == UInt8(ascii: "{") ? "json" : "plist"
                for old in ["json", "plist"] { try? FileManager.default.removeItem(atPath: "\(paths.appsDirectory)/\(parsed.bundleIdentifier).\(old)") }
                try AtomicFile.write(data, to: "\(paths.appsDirectory)/\(parsed.bundleIdentifier).\(suffix)")
                try container.create()
            } catch {
                printError("folio: refused \(manifest): \(error)")
                throw ExitCode.failure
            }
            print("registered \(parsed.bundleIdentifier): \(parsed.exportedTypes.count) exported, \(parsed.importedTypes.count) imported types, \(parsed.documentTypes.count) document types; container \(container.url.path)")
        }
    }

    /// `folio app list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List registered apps and their containers.")

        @Flag(help: "Print JSON.") var json = false

        func run() {
            let paths = FolioPaths()
            let apps = TypeRegistry.shared.apps
            if json {
                printJSON(apps.map { app -> [String: Any] in
                    [
                        "id": app.bundleIdentifier, "name": app.name ?? "", "documentTypes": app.documentTypes.count,
                        "container": AppContainer(appIdentifier: app.bundleIdentifier, paths: paths).url.path,
                        "opensInPlace": app.supportsOpeningDocumentsInPlace,
                        "ubiquitousContainers": app.ubiquitousContainers.map(\.identifier),
                    ]
                })
            } else if apps.isEmpty {
                print("no apps registered (folio app register Info.plist)")
            } else {
                printTable(
                    ["APP", "NAME", "CONTAINER"],
                    apps.map { [$0.bundleIdentifier, $0.name ?? "", AppContainer(appIdentifier: $0.bundleIdentifier, paths: paths).url.path] })
            }
        }
    }

    /// `folio app unregister <id>`.
    struct Unregister: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unregister",
            abstract: "Unregister an app: its type choices and grants go; its container stays unless --delete-container.",
            aliases: ["remove"])

        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String
        @Flag(help: "Also delete the app's container and every document in it.") var deleteContainer = false

        func run() throws {
            let paths = FolioPaths()
            let handlers = HandlerRegistry(types: TypeRegistry.shared, paths: paths)
            guard handlers.uninstall(bundleIdentifier: bundleIdentifier) else {
                printError("folio: no app \(bundleIdentifier) is registered")
                throw ExitCode.failure
            }
            for suffix in ["json", "plist"] { try? FileManager.default.removeItem(atPath: "\(paths.appsDirectory)/\(bundleIdentifier).\(suffix)") }
            if let engine = try? DaemonCoordinationEngine(socketPath: paths.socketPath) {
                defer { engine.disconnect() }
                _ = try? engine.send(GrantRevoke(app: bundleIdentifier))
            }
            let container = AppContainer(appIdentifier: bundleIdentifier, paths: paths)
            if deleteContainer {
                try? FileManager.default.removeItem(at: container.url)
                print("unregistered \(bundleIdentifier); deleted its container")
            } else {
                print("unregistered \(bundleIdentifier); its container stays at \(container.url.path)")
            }
        }
    }
}
