public import FolioSystem
public import Foundation

/// A freedesktop application (a `.desktop` file), found by its desktop entry id the way the
/// Desktop Entry Specification says, and started through its `Exec` line as `gio open` starts it.
public struct DesktopEntry: Sendable, Hashable {
    /// The desktop entry id (`org.gnome.TextEditor.desktop`).
    public var id: String
    /// The file it was read from.
    public var path: String
    /// The name shown to people.
    public var name: String
    /// The `Exec` line's arguments, field codes still in them.
    public var exec: [String]
    /// The icon's name, when it has one.
    public var icon: String?
    /// Whether it runs in a terminal.
    public var terminal: Bool
    /// The MIME types it declares.
    public var mimeTypes: [String]

    /// The folders entries are looked up in, highest priority first:
    /// `$XDG_DATA_HOME/applications`, then each of `$XDG_DATA_DIRS`.
    public static func folders(paths: FolioPaths) -> [String] {
        ([paths.dataHome] + paths.dataDirectories).map { $0 + "/applications" }
    }

    /// The entry with desktop entry id `id`, from the first folder that has it (`a-b.desktop` is
    /// also looked for as `a/b.desktop`); nil when none does, or the entry is hidden, is not an
    /// application, or its `TryExec` program is missing.
    public static func find(_ id: String, paths: FolioPaths) -> DesktopEntry? {
        guard id.hasSuffix(".desktop"), !id.contains("/"), !id.hasPrefix(".") else { return nil }
        var candidates = [id]
        // The id of `folder/name.desktop` is `folder-name.desktop`: each dash may be a folder.
        let dashes = id.indices.filter { id[$0] == "-" }
        for dash in dashes { candidates.append(id.replacingCharacters(in: dash...dash, with: "/")) }
        for folder in folders(paths: paths) {
            for candidate in candidates {
                let file = folder + "/" + candidate
                guard let bytes = SharedMimeInfo.readFile(file) else { continue }
                return DesktopEntry(id: id, path: file, bytes: bytes)
            }
        }
        return nil
    }

    /// Reads an entry's `[Desktop Entry]` group; nil when it is not a usable application.
    public init?(id: String, path: String, bytes: [UInt8]) {
        guard bytes.count <= 1 << 20 else { return nil }
        var group = ""
        var values: [String: String] = [:]
        SharedMimeInfo.forEachLine(bytes) { raw in
            let line = String(decoding: raw, as: UTF8.self).trimmingSpaces()
            if line.isEmpty || line.hasPrefix("#") { return }
            if line.hasPrefix("[") {
                group = String(line)
                return
            }
            guard group == "[Desktop Entry]", let equals = line.firstIndex(of: "=") else { return }
            let key = String(line[..<equals].trimmingCharacters())
            // Localized keys (`Name[de]`) are left for the unlocalized one.
            if key.contains("[") || values[key] != nil { return }
            values[key] = Self.unescaped(String(line[line.index(after: equals)...].trimmingCharacters()))
        }
        guard values["Type"] == "Application", values["Hidden"] != "true", let name = values["Name"], let line = values["Exec"],
            let exec = Self.arguments(ofExec: line), let program = exec.first
        else { return nil }
        if let tryExec = values["TryExec"], ExecutableSearch.locate(tryExec) == nil { return nil }
        guard program.hasPrefix("/") || !program.contains("/") else { return nil }
        self.id = id
        self.path = path
        self.name = name
        self.exec = exec
        icon = values["Icon"].flatMap { $0.isEmpty ? nil : $0 }
        terminal = values["Terminal"] == "true"
        mimeTypes = (values["MimeType"] ?? "").split(separator: ";").map { String($0.trimmingCharacters()) }.filter { !$0.isEmpty }
    }

    /// A key file's string escapes undone: `\s`, `\n`, `\t`, `\r`, `\\`.
    static func unescaped(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var result = ""
        var escaping = false
        for character in value {
            if escaping {
                switch character {
                case "s": result.append(" ")
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                default: result.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The arguments of an `Exec` value: split at spaces outside double quotes, where `\"`, `` \` ``,
    /// `\$` and `\\` stand for the character; nil for an unterminated quote or an empty line.
    static func arguments(ofExec line: String) -> [String]? {
        var arguments: [String] = []
        var current = ""
        var hasCurrent = false
        var quoted = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            if quoted {
                if character == "\\" {
                    guard let next = iterator.next() else { return nil }
                    if !"\"`$\\".contains(next) { current.append("\\") }
                    current.append(next)
                } else if character == "\"" {
                    quoted = false
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                quoted = true
                hasCurrent = true
            } else if character == " " || character == "\t" {
                if hasCurrent { arguments.append(current) }
                current = ""
                hasCurrent = false
            } else {
                current.append(character)
                hasCurrent = true
            }
        }
        guard !quoted else { return nil }
        if hasCurrent { arguments.append(current) }
        return arguments.isEmpty ? nil : arguments
    }

    /// The command that opens `files` (absolute paths): the field codes expanded — `%f` and `%F`
    /// to paths, `%u` and `%U` to `file://` URLs, `%i` to `--icon` and the icon, `%c` to the name,
    /// `%k` to the entry's file, `%%` to `%`, the deprecated ones dropped — and, as GLib does, the
    /// first file appended when the line takes none. The program is looked up on `PATH`; nil when
    /// it is not there.
    public func command(opening files: [String], path searchPath: String? = ProcessInfo.processInfo.environment["PATH"]) -> [String]? {
        let urls = files.map { URL(fileURLWithPath: $0).absoluteString }
        var command: [String] = []
        var tookFiles = false
        for argument in exec {
            switch argument {
            case "%F": command += files; tookFiles = true
            case "%U": command += urls; tookFiles = true
            case "%i": if let icon { command += ["--icon", icon] }
            case "%d", "%D", "%n", "%N", "%v", "%m": continue
            default:
                var expanded = ""
                var iterator = argument.makeIterator()
                while let character = iterator.next() {
                    guard character == "%" else {
                        expanded.append(character)
                        continue
                    }
                    switch iterator.next() {
                    case "%": expanded.append("%")
                    case "f": expanded += files.first ?? ""; tookFiles = true
                    case "u": expanded += urls.first ?? ""; tookFiles = true
                    case "c": expanded += name
                    case "k": expanded += path
                    default: continue
                    }
                }
                command.append(expanded)
            }
        }
        if !tookFiles, let first = files.first { command.append(first) }
        guard let program = command.first, let located = ExecutableSearch.locate(program, path: searchPath) else { return nil }
        command[0] = located
        return command
    }
}
