import ArgumentParser
import Folio
import Foundation

/// `folio apps`: register app manifests (Info.plist keys) so their types and document claims count.
struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Register, list and remove app manifests.",
        subcommands: [Install.self, List.self, Remove.self]
    )

    /// `folio apps install <manifest>`.
    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an app from its manifest (XML or binary Info.plist, or JSON with the same keys).")

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
            do {
                try handlers.install(parsed)
                try FileManager.default.createDirectory(atPath: paths.appsDirectory, withIntermediateDirectories: true)
                let suffix = data.first == UInt8(ascii: "{") ? "json" : "plist"
                for old in ["json", "plist"] { try? FileManager.default.removeItem(atPath: "\(paths.appsDirectory)/\(parsed.bundleIdentifier).\(old)") }
                try AtomicFile.write(data, to: "\(paths.appsDirectory)/\(parsed.bundleIdentifier).\(suffix)")
            } catch {
                printError("folio: refused \(manifest): \(error)")
                throw ExitCode.failure
            }
            print("installed \(parsed.bundleIdentifier): \(parsed.exportedTypes.count) exported, \(parsed.importedTypes.count) imported types, \(parsed.documentTypes.count) document types")
        }
    }

    /// `folio apps list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registered apps.")

        @Flag(help: "Print JSON.") var json = false

        func run() {
            let apps = TypeRegistry.shared.apps
            if json {
                printJSON(apps.map { ["id": $0.bundleIdentifier, "name": $0.name ?? "", "documentTypes": $0.documentTypes.count] })
            } else {
                for app in apps { print("\(app.bundleIdentifier)\t\(app.name ?? "")") }
            }
        }
    }

    /// `folio apps remove <id>`.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a registered app and the choices that name it.")

        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String

        func run() throws {
            let paths = FolioPaths()
            let handlers = HandlerRegistry(types: TypeRegistry.shared, paths: paths)
            guard handlers.uninstall(bundleIdentifier: bundleIdentifier) else {
                printError("folio: no app \(bundleIdentifier) is registered")
                throw ExitCode.failure
            }
            for suffix in ["json", "plist"] { try? FileManager.default.removeItem(atPath: "\(paths.appsDirectory)/\(bundleIdentifier).\(suffix)") }
            print("removed \(bundleIdentifier)")
        }
    }
}
