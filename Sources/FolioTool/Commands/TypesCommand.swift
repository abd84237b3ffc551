import ArgumentParser
import Folio
import Foundation

/// `folio types`: the uniform type system.
struct TypesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types",
        abstract: "Look up uniform types, the types of files, conformance and handlers.",
        subcommands: [Show.self, Of.self, Conforms.self, Handlers.self, SetDefault.self]
    )

    struct Options: ParsableArguments {
        @Flag(help: "Print JSON.")
        var json = false
    }

    /// `folio types show <id|ext|mime>`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show a type, by identifier, filename extension or MIME type.")

        @Argument(help: "A type identifier (public.jpeg), extension (jpg, .jpg) or MIME type (image/jpeg).")
        var query: String
        @OptionGroup var options: Options

        func run() throws {
            let type = try resolveType(query)
            let info = TypeReport.describe(type)
            if options.json { printJSON(info) } else { TypeReport.printText(info) }
        }
    }

    /// `folio types of <file>…`.
    struct Of: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "of", abstract: "Print the content type of each file.")

        @Argument(help: "Files to examine.")
        var files: [String]
        @OptionGroup var options: Options

        func run() throws {
            var results: [[String: Any]] = []
            var failed = false
            for file in files {
                do {
                    let found = try UTType.contentType(ofItemAt: URL(fileURLWithPath: file))
                    var entry: [String: Any] = ["path": file, "identifier": found.type.identifier, "source": found.source.rawValue]
                    entry["mimeType"] = found.type.preferredMIMEType
                    entry["description"] = found.type.localizedDescription
                    results.append(entry)
                    if !options.json {
                        print("\(file): \(found.type.identifier) (\(found.type.preferredMIMEType ?? "no MIME type"); by \(found.source.rawValue))")
                    }
                } catch {
                    failed = true
                    results.append(["path": file, "error": "\(error.localizedDescription)"])
                    printError("folio: \(file): \((error as? CocoaError)?.code == .fileReadNoSuchFile ? "no such file" : error.localizedDescription)")
                }
            }
            if options.json { printJSON(results) }
            if failed { throw ExitCode.failure }
        }
    }

    /// `folio types conforms <a> <b>`.
    struct Conforms: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conforms",
            abstract: "Say whether type A conforms to type B (exit status 0 if it does, 1 if not).")

        @Argument(help: "The type that may conform.")
        var a: String
        @Argument(help: "The type it may conform to.")
        var b: String
        @OptionGroup var options: Options

        func run() throws {
            let typeA = try resolveType(a)
            let typeB = try resolveType(b)
            let result = typeA.conforms(to: typeB)
            if options.json {
                printJSON(["type": typeA.identifier, "conformsTo": typeB.identifier, "result": result])
            } else {
                print("\(typeA.identifier) \(result ? "conforms" : "does not conform") to \(typeB.identifier)")
            }
            if !result { throw ExitCode(1) }
        }
    }

    /// `folio types handlers <file>`.
    struct Handlers: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "handlers", abstract: "Show which app opens a file, why, and the other candidates.")

        @Argument(help: "The file.")
        var file: String
        @OptionGroup var options: Options

        func run() throws {
            let handlers = HandlerRegistry(types: TypeRegistry.shared, paths: FolioPaths())
            let found = try UTType.contentType(ofItemAt: URL(fileURLWithPath: file))
            let choice = handlers.choice(for: found.type)
            let candidates = handlers.candidates(for: found.type)
            if options.json {
                var out: [String: Any] = ["path": file, "contentType": found.type.identifier]
                if let choice {
                    out["handler"] = [
                        "id": choice.handler.description, "kind": choice.handler.isApp ? "app" : "desktop-entry",
                        "reason": choice.reason.rawValue, "matchedType": choice.matchedType.identifier,
                    ]
                }
                out["candidates"] = candidates.map {
                    ["app": $0.bundleIdentifier, "rank": $0.rank.description, "role": $0.role.rawValue, "matchedType": $0.matchedType.identifier]
                }
                printJSON(out)
                return
            }
            print("\(file): \(found.type.identifier)")
            if let choice {
                print("opens with: \(choice.handler) (\(choice.reason.rawValue), for \(choice.matchedType.identifier))")
            } else {
                print("opens with: nothing registered")
            }
            for c in candidates {
                print("  candidate: \(c.bundleIdentifier) rank \(c.rank) role \(c.role.rawValue) for \(c.matchedType.identifier)")
            }
        }
    }

    /// `folio types set-default <type> <app>`.
    struct SetDefault: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-default", abstract: "Choose the app that opens a type (and the types that conform to it).")

        @Argument(help: "A type identifier, extension or MIME type.")
        var type: String
        @Argument(help: "The app's bundle identifier, or 'none' to forget the choice.")
        var app: String

        func run() throws {
            let utType = try resolveType(type)
            let handlers = HandlerRegistry(types: TypeRegistry.shared, paths: FolioPaths())
            do {
                try handlers.setDefaultHandler(app == "none" ? nil : app, for: utType)
            } catch {
                printError("folio: \(error)")
                throw ExitCode.failure
            }
            print(app == "none" ? "forgot the choice for \(utType.identifier)" : "\(utType.identifier) opens with \(app)")
        }
    }
}

/// Resolves what the user typed to a type, or exits with status 2 and says why.
func resolveType(_ query: String) throws -> UTType {
    guard let type = TypeRegistry.shared.type(matching: query) else {
        printError("folio: no type matches \"\(query)\"")
        throw ExitCode(2)
    }
    return type
}

extension HandlerRegistry.Handler {
    var isApp: Bool {
        if case .app = self { return true }
        return false
    }
}

/// Renders a type for `folio types show`.
enum TypeReport {
    static func describe(_ type: UTType) -> [String: Any] {
        var info: [String: Any] = [
            "identifier": type.identifier,
            "declared": type.isDeclared,
            "dynamic": type.isDynamic,
            "public": type.isPublic,
            "conformsTo": type.declaration.map { _ in directParents(type) } ?? [],
            "supertypes": type.supertypesNearestFirst.map(\.identifier),
            "filenameExtensions": type.tags[.filenameExtension] ?? [],
            "mimeTypes": type.tags[.mimeType] ?? [],
        ]
        info["description"] = type.localizedDescription
        info["preferredFilenameExtension"] = type.preferredFilenameExtension
        info["preferredMIMEType"] = type.preferredMIMEType
        info["origin"] = type.origin?.description
        info["owner"] = type.declaration?.owner
        info["referenceURL"] = type.referenceURL?.absoluteString
        return info
    }

    private static func directParents(_ type: UTType) -> [String] {
        type.supertypesNearestFirst.filter { parent in
            !type.supertypesNearestFirst.contains { $0 != parent && $0.conforms(to: parent) }
        }.map(\.identifier)
    }

    static func printText(_ info: [String: Any]) {
        let order = [
            "identifier", "description", "origin", "owner", "declared", "dynamic", "public", "conformsTo", "supertypes",
            "preferredFilenameExtension", "filenameExtensions", "preferredMIMEType", "mimeTypes", "referenceURL",
        ]
        for key in order {
            guard let value = info[key] else { continue }
            let text = (value as? [String]).map { $0.joined(separator: ", ") } ?? "\(value)"
            print("\(key): \(text)")
        }
    }
}
