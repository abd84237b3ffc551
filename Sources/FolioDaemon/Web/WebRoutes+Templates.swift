import Folio
import FolioSystem
import Foundation
import Hummingbird
import SystemPackage

extension WebRoutes {
    /// New documents: from the user's templates folder (`~/Templates`, or `XDG_TEMPLATES_DIR` in
    /// `user-dirs.dirs`, where Nautilus looks too) and the templates registered apps declare
    /// (`FolioDocumentTemplates`). Only a listed template can be copied: the request names it, never
    /// an arbitrary file.
    static func addTemplateRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("templates") { _, _ in
            await answer {
                WebJSON.response(TemplateList(templates: try await state.blocking(.quick) { templates(state) }))
            }
        }

        api.post("new") { request, _ in
            await answer {
                let change = try await body(NewDocument.self, of: request)
                let scope = await state.scope()
                let created = try await state.blocking(.slow) { () throws -> String in
                    let folder = try scope.folder(change.folder)
                    guard let template = templates(state).first(where: { $0.path == change.template }),
                        let source = try? ResolvedItem.resolve(template.path), source.status.kind == .regular
                    else {
                        throw WebScope.Refusal(status: 404, message: "no template \(change.template)")
                    }
                    let name = change.name ?? template.fileName
                    try WebScope.checkName(name)
                    let copy = try state.files.copy(source, into: folder, named: name)
                    return change.folder + "/" + (copy.path as NSString).lastPathComponent
                }
                return try await changed(["path": created], state: state)
            }
        }
    }

    /// The templates offered, the user's first.
    static func templates(_ state: WebState) -> [Template] {
        var found: [Template] = []
        if let folder = userTemplates(state) {
            _ = DirectoryScanner().list(
                folder,
                visit: { entry in
                    guard entry.status.kind == .regular, !entry.name.hasPrefix(".") else { return }
                    found.append(Template(name: (entry.name as NSString).deletingPathExtension, fileName: entry.name, path: entry.path, app: nil))
                }, skipped: { _, _ in })
        }
        found.sort { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
        let catalog = state.context.access.catalog
        for identifier in catalog.identifiers() {
            guard let manifest = catalog.manifest(identifier) else { continue }
            // A template is public content: a file everyone may read (so a manifest cannot name
            // the user's private files, `~/.ssh/id_rsa`, to have them copied where they sync).
            for path in manifest.documentTemplates {
                guard let status = try? FileStatus(path: FilePath(path), followSymlinks: true), status.kind == .regular, status.mode & 0o004 != 0 else {
                    continue
                }
                let fileName = (path as NSString).lastPathComponent
                found.append(Template(name: (fileName as NSString).deletingPathExtension, fileName: fileName, path: path, app: manifest.name ?? identifier))
            }
        }
        return found
    }

    /// `XDG_TEMPLATES_DIR` from `$XDG_CONFIG_HOME/user-dirs.dirs`, else `~/Templates`; nil when it
    /// names the home folder itself (xdg-user-dirs' way of saying "none").
    private static func userTemplates(_ state: WebState) -> String? {
        guard let home = state.home else { return nil }
        var folder = home + "/Templates"
        if let text = try? String(contentsOfFile: state.paths.configHome + "/user-dirs.dirs", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("XDG_TEMPLATES_DIR=") {
                let value = line.dropFirst("XDG_TEMPLATES_DIR=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                folder = value.replacingOccurrences(of: "$HOME", with: home)
            }
        }
        return folder == home || folder == home + "/" ? nil : folder
    }
}

struct Template: Encodable, Sendable {
    var name: String
    var fileName: String
    var path: String
    /// The app that ships it; nil for the user's own.
    var app: String?
}

struct TemplateList: Encodable, Sendable {
    var templates: [Template]
}

struct NewDocument: Decodable {
    var folder: String
    /// A listed template's path.
    var template: String
    /// The new document's name (default: the template's).
    var name: String?
}
