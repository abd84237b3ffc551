import Foundation

/// The parts of a compiled shared-mime-info database (`update-mime-database` output) that Folio uses:
/// `types`, `globs2`, `subclasses` and `aliases` from each MIME directory, merged in priority order.
///
/// These files are generated from `packages/*.xml`, hold the same globs, `sub-class-of` edges and
/// aliases, and parse in well under a millisecond; the 2.4 MB XML would not. Descriptions (`comment`)
/// and magic are read lazily, only when asked for.
struct SharedMimeInfo: Sendable {
    /// One filename pattern.
    struct Glob: Sendable, Hashable {
        var weight: Int
        var mimeType: String
        var pattern: String
        var caseSensitive: Bool
    }

    /// The MIME directories read, highest priority first (for lazy comment and magic reads).
    var directories: [String] = []
    /// Canonical MIME types, in first-seen order.
    var mimeTypes: [String] = []
    /// Glob patterns, highest weight first, in file order within a weight.
    var globs: [Glob] = []
    /// Direct parents (`sub-class-of`) of each canonical MIME type, in file order.
    var parents: [String: [String]] = [:]
    /// Alias → canonical MIME type.
    var aliases: [String: String] = [:]

    /// The largest file accepted for any one database file; real ones are tens of kilobytes.
    static let maximumFileSize = 8 << 20

    /// Returns the MIME directories in XDG priority order: `$XDG_DATA_HOME/mime`, then each of
    /// `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`) + `/mime`.
    static func defaultDirectories(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let home = environment["HOME"] ?? "/"
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        let dataDirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init)
        return ([dataHome] + dataDirs).map { $0 + "/mime" }
    }

    /// Loads and merges the databases in `directories` (highest priority first). Missing directories
    /// and files are skipped; a file that is unreadable or malformed line by line has those lines skipped.
    static func load(directories: [String]) -> SharedMimeInfo {
        var info = SharedMimeInfo()
        var seenTypes = Set<String>()
        var globsSeen = Set<String>()
        var clearedGlobs = Set<String>()
        for directory in directories {
            guard let types = readFile(directory + "/types") else { continue }
            info.directories.append(directory)
            forEachLine(types) { line in
                let type = String(decoding: line, as: UTF8.self).lowercased()
                if isMimeType(type), seenTypes.insert(type).inserted { info.mimeTypes.append(type) }
            }
            var directoryGlobs: [Glob] = []
            var noGlobs = Set<String>()
            if let globs = readFile(directory + "/globs2") {
                forEachLine(globs) { line in
                    let fields = line.split(separator: UInt8(ascii: ":"), maxSplits: 3, omittingEmptySubsequences: false)
                    guard fields.count >= 3, let weight = Int(String(decoding: fields[0], as: UTF8.self)),
                        (0...100).contains(weight)
                    else { return }
                    let type = String(decoding: fields[1], as: UTF8.self).lowercased()
                    let pattern = String(decoding: fields[2], as: UTF8.self)
                    guard isMimeType(type), !pattern.isEmpty else { return }
                    if pattern == "__NOGLOBS__" {
                        noGlobs.insert(type)
                        return
                    }
                    let flags = fields.count > 3 ? String(decoding: fields[3], as: UTF8.self) : ""
                    directoryGlobs.append(
                        Glob(weight: weight, mimeType: type, pattern: pattern,
                             caseSensitive: flags.split(separator: ",").contains("cs")))
                }
            }
            // A higher-priority directory's globs for a type replace lower ones only via __NOGLOBS__.
            for glob in directoryGlobs where !clearedGlobs.contains(glob.mimeType) {
                if globsSeen.insert("\(glob.mimeType)\u{0}\(glob.pattern)").inserted { info.globs.append(glob) }
            }
            clearedGlobs.formUnion(noGlobs)
            if let subclasses = readFile(directory + "/subclasses") {
                forEachLine(subclasses) { line in
                    let fields = line.split(separator: UInt8(ascii: " "))
                    guard fields.count == 2 else { return }
                    let child = String(decoding: fields[0], as: UTF8.self).lowercased()
                    let parent = String(decoding: fields[1], as: UTF8.self).lowercased()
                    guard isMimeType(child), isMimeType(parent), child != parent else { return }
                    if !(info.parents[child]?.contains(parent) ?? false) { info.parents[child, default: []].append(parent) }
                }
            }
            if let aliases = readFile(directory + "/aliases") {
                forEachLine(aliases) { line in
                    let fields = line.split(separator: UInt8(ascii: " "))
                    guard fields.count == 2 else { return }
                    let alias = String(decoding: fields[0], as: UTF8.self).lowercased()
                    let canonical = String(decoding: fields[1], as: UTF8.self).lowercased()
                    guard isMimeType(alias), isMimeType(canonical), alias != canonical else { return }
                    if info.aliases[alias] == nil { info.aliases[alias] = canonical }
                }
            }
        }
        // Stable sort: weight descending, file order within a weight.
        info.globs = info.globs.enumerated().sorted {
            if $0.element.weight != $1.element.weight { return $0.element.weight > $1.element.weight }
            return $0.offset < $1.offset
        }.map(\.element)
        return info
    }

    /// Returns the canonical form of a MIME type (resolving aliases), lowercased.
    func canonical(_ mimeType: String) -> String {
        let lower = mimeType.lowercased()
        return aliases[lower] ?? lower
    }

    /// Returns whether `text` looks like `media/subtype` with no spaces or control characters.
    static func isMimeType(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count <= 255, let slash = utf8.firstIndex(of: UInt8(ascii: "/")),
            slash != utf8.startIndex, utf8.index(after: slash) != utf8.endIndex
        else { return false }
        var slashes = 0
        for byte in utf8 {
            if byte == UInt8(ascii: "/") { slashes += 1 }
            if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: ":") { return false }
        }
        return slashes == 1
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: maximumFileSize + 1), data.count <= maximumFileSize else {
            return nil
        }
        return [UInt8](data)
    }

    /// Calls `body` with each non-empty line that is not a `#` comment.
    static func forEachLine(_ bytes: [UInt8], _ body: (ArraySlice<UInt8>) -> Void) {
        var start = 0
        let count = bytes.count
        while start < count {
            var end = start
            while end < count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
            if end > start && bytes[start] != UInt8(ascii: "#") {
                var lineEnd = end
                if bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                if lineEnd > start { body(bytes[start..<lineEnd]) }
            }
            start = end + 1
        }
    }
}
