import FolioSystem

/// The user's MIME-type defaults from freedesktop `mimeapps.list` files (the Default Applications
/// section), read in the spec's order: `$XDG_CONFIG_HOME/$desktop-mimeapps.list`,
/// `$XDG_CONFIG_HOME/mimeapps.list`, then `$XDG_CONFIG_DIRS`, then the deprecated
/// `$XDG_DATA_HOME/applications` and `$XDG_DATA_DIRS/applications`. The first file that names a
/// default for a MIME type wins.
struct MimeAppsList: Sendable {
    /// Canonical (lowercased) MIME type → desktop entry ids, preferred first.
    private(set) var defaults: [String: [String]] = [:]

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

    /// Reads the files; missing or unreadable ones are skipped.
    init(files: [String]) {
        for file in files {
            guard let bytes = SharedMimeInfo.readFile(file) else { continue }
            merge(parsing: bytes)
        }
    }

    /// Parses one file and adds the defaults not already set by a higher-priority file.
    mutating func merge(parsing bytes: [UInt8]) {
        var inDefaults = false
        var found: [String: [String]] = [:]
        SharedMimeInfo.forEachLine(bytes) { raw in
            let line = String(decoding: raw, as: UTF8.self).trimmingSpaces()
            if line.hasPrefix("[") {
                inDefaults = line == "[Default Applications]"
                return
            }
            guard inDefaults, let equals = line.firstIndex(of: "=") else { return }
            let mime = line[..<equals].trimmingCharacters().lowercased()
            guard SharedMimeInfo.isMimeType(mime) else { return }
            let apps = line[line.index(after: equals)...].split(separator: ";").map { String($0.trimmingCharacters()) }
                .filter { !$0.isEmpty && $0.hasSuffix(".desktop") && !$0.contains("/") }
            if !apps.isEmpty, found[mime] == nil { found[mime] = apps }
        }
        for (mime, apps) in found where defaults[mime] == nil { defaults[mime] = apps }
    }

    /// The default desktop entry for a MIME type, if the user set one.
    func defaultEntry(for mime: String) -> String? { defaults[mime.lowercased()]?.first }
}
