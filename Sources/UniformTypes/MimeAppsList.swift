import FolioSystem

/// The user's MIME-type defaults from freedesktop `mimeapps.list` files (the Default Applications
/// section), read in the spec's order: `$XDG_CONFIG_HOME/$desktop-mimeapps.list`,
/// `$XDG_CONFIG_HOME/mimeapps.list`, then `$XDG_CONFIG_DIRS`, then the deprecated
/// `$XDG_DATA_HOME/applications` and `$XDG_DATA_DIRS/applications`. The first file that names a
/// default for a MIME type wins.
///
/// Beside the defaults: the associations the files add and remove (`[Added Associations]`,
/// `[Removed Associations]`), and the applications installed for each type (`mimeinfo.cache` in
/// each applications folder, which `update-desktop-database` writes), for when no default is set.
struct MimeAppsList: Sendable {
    /// Canonical (lowercased) MIME type → desktop entry ids, preferred first.
    private(set) var defaults: [String: [String]] = [:]
    /// Associations added by the user or the system, higher-priority files first.
    private(set) var added: [String: [String]] = [:]
    /// Associations removed (never offered for the type).
    private(set) var removed: [String: Set<String>] = [:]
    /// The applications installed for each type, from the `mimeinfo.cache` files.
    private(set) var installed: [String: [String]] = [:]

    /// The files consulted, highest priority first.
    static func files(paths: FolioPaths, desktops: [String]) -> [String] {
        var files: [String] = []
        for directory in [paths.configHome] + paths.configDirectories {
            for desktop in desktops { files.append("\(directory)/\(desktop.lowercased())-mimeapps.list") }
            files.append("\(directory)/mimeapps.list")
        }
        for directory in [paths.dataHome] + paths.dataDirectories {
            files.append("\(directory)/applications/mimeapps.list")
        }
        return files
    }

    init() {}

    /// Reads the files, then the `mimeinfo.cache` of each of `applicationFolders`; missing or
    /// unreadable ones are skipped.
    init(files: [String], applicationFolders: [String] = []) {
        for file in files {
            guard let bytes = SharedMimeInfo.readFile(file) else { continue }
            merge(parsing: bytes)
        }
        for folder in applicationFolders {
            guard let bytes = SharedMimeInfo.readFile(folder + "/mimeinfo.cache") else { continue }
            for (mime, apps) in Self.sections(bytes)["[MIME Cache]"] ?? [:] {
                installed[mime, default: []] += apps.filter { !(installed[mime]?.contains($0) ?? false) }
            }
        }
    }

    /// Parses one file and adds the defaults not already set by a higher-priority file, and its
    /// added and removed associations.
    mutating func merge(parsing bytes: [UInt8]) {
        let sections = Self.sections(bytes)
        for (mime, apps) in sections["[Default Applications]"] ?? [:] where defaults[mime] == nil { defaults[mime] = apps }
        for (mime, apps) in sections["[Added Associations]"] ?? [:] {
            added[mime, default: []] += apps.filter { !(added[mime]?.contains($0) ?? false) }
        }
        for (mime, apps) in sections["[Removed Associations]"] ?? [:] { removed[mime, default: []].formUnion(apps) }
    }

    /// A file's `mime=a.desktop;b.desktop;` lines by section (the first line for a type in a
    /// section counts).
    private static func sections(_ bytes: [UInt8]) -> [String: [String: [String]]] {
        var section = ""
        var found: [String: [String: [String]]] = [:]
        SharedMimeInfo.forEachLine(bytes) { raw in
            let line = String(decoding: raw, as: UTF8.self).trimmingSpaces()
            if line.hasPrefix("[") {
                section = String(line)
                return
            }
            guard let equals = line.firstIndex(of: "=") else { return }
            let mime = line[..<equals].trimmingCharacters().lowercased()
            guard SharedMimeInfo.isMimeType(mime) else { return }
            let apps = line[line.index(after: equals)...].split(separator: ";").map { String($0.trimmingCharacters()) }
                .filter { !$0.isEmpty && $0.hasSuffix(".desktop") && !$0.contains("/") }
            if !apps.isEmpty, found[section]?[mime] == nil { found[section, default: [:]][mime] = apps }
        }
        return found
    }

    /// The default desktop entry for a MIME type, if the user set one.
    func defaultEntry(for mime: String) -> String? { defaults[mime.lowercased()]?.first }

    /// The applications associated with a MIME type when no default is set: the added
    /// associations, then the installed ones, without the removed ones.
    func associatedEntries(for mime: String) -> [String] {
        let mime = mime.lowercased()
        let gone = removed[mime] ?? []
        var seen = Set<String>()
        return ((added[mime] ?? []) + (installed[mime] ?? [])).filter { !gone.contains($0) && seen.insert($0).inserted }
    }
}
