import Folio
import FolioSystem
import Foundation
import SystemPackage

/// The terminal picker: lists a folder (filtered to the requested types, folders kept for
/// navigation), and reads the user's choice line by line — numbers to choose (several with
/// commas when allowed), a folder's number to enter it, `..` to go up, `/text` to filter names,
/// `.` to choose the folder shown (export and move), `c` to cancel.
struct TerminalPicker {
    var request: PickerRequest
    var title: String
    var readLine: () -> String?
    var output: (String) -> Void

    struct Entry {
        var name: String
        var path: String
        var isDirectory: Bool
        var size: Int64
    }

    /// The chosen paths, or nil when the user cancelled.
    func run() -> [String]? {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? "/"
        var folder = request.directory ?? (FileManager.default.currentDirectoryPath.isEmpty ? home : FileManager.default.currentDirectoryPath)
        var filter = ""
        let wantsFolder = request.mode == .export || request.mode == .move
        let types = request.types.compactMap { UTType($0) }
        let picksFolders = types.contains { UTType.folder.conforms(to: $0) }
        write(title)
        while true {
            let entries = list(folder, filter: filter, types: types)
            write("\n\(folder)\(filter.isEmpty ? "" : "  (names containing \"\(filter)\")")")
            if entries.isEmpty { write("  (nothing to choose here)") }
            for (index, entry) in entries.enumerated() {
                let name = entry.isDirectory ? entry.name + "/" : displayName(entry.name)
                let size = entry.isDirectory ? "" : ByteCountFormatter.string(fromByteCount: entry.size, countStyle: .file)
                write(String(format: "  %3d  %@", index + 1, name) + (size.isEmpty ? "" : "  " + size))
            }
            var help = wantsFolder ? "'.' to \(request.mode.rawValue) here, a number to enter a folder" : "a number to choose (or enter a folder)"
            if request.allowsMultipleSelection && !wantsFolder { help += ", several as 1,3,4" }
            if picksFolders { help += ", '.' to choose this folder" }
            write("\(help); '..' up, '/text' filter, 'c' cancel")
            write("> ", terminator: false)
            guard let line = readLine()?.trimmingCharacters(in: .whitespaces) else { return nil }
            switch line {
            case "c", "q", "cancel": return nil
            case "..":
                folder = (folder as NSString).deletingLastPathComponent
                filter = ""
                continue
            case ".":
                if wantsFolder || picksFolders { return [folder] }
                write("choose a document, not the folder")
                continue
            default: break
            }
            if line.hasPrefix("/") {
                filter = String(line.dropFirst())
                continue
            }
            let numbers = line.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !numbers.isEmpty, numbers.allSatisfy({ $0 != nil && $0! >= 1 && $0! <= entries.count }) else {
                write("not a choice: \(line)")
                continue
            }
            let chosen = numbers.map { entries[$0! - 1] }
            if chosen.count == 1, chosen[0].isDirectory, !picksFolders || wantsFolder {
                folder = chosen[0].path
                filter = ""
                continue
            }
            if wantsFolder {
                write("enter a folder, then '.' to choose it")
                continue
            }
            if chosen.count > 1 && !request.allowsMultipleSelection {
                write("choose one item")
                continue
            }
            return chosen.map(\.path)
        }
    }

    private func write(_ text: String, terminator: Bool = true) {
        output(terminator ? text + "\n" : text)
    }

    private func displayName(_ name: String) -> String {
        request.showsFileExtensions ? name : ((name as NSString).deletingPathExtension.isEmpty ? name : (name as NSString).deletingPathExtension)
    }

    /// The folder's entries: folders first, then items of the requested types; hidden ones skipped.
    private func list(_ folder: String, filter: String, types: [UTType]) -> [Entry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var result: [Entry] = []
        for name in names where !name.hasPrefix(".") {
            if !filter.isEmpty, !name.localizedCaseInsensitiveContains(filter) { continue }
            let path = folder == "/" ? "/" + name : folder + "/" + name
            guard let status = try? FileStatus(path: FilePath(path), followSymlinks: true) else { continue }
            let isDirectory = status.kind == .directory
            if !isDirectory, !types.isEmpty {
                guard let type = try? UTType.contentType(ofItemAt: URL(fileURLWithPath: path)).type, types.contains(where: { type.conforms(to: $0) })
                else { continue }
            }
            result.append(Entry(name: name, path: path, isDirectory: isDirectory, size: status.size))
        }
        return result.sorted { ($0.isDirectory ? 0 : 1, $0.name.lowercased()) < ($1.isDirectory ? 0 : 1, $1.name.lowercased()) }
    }
}
