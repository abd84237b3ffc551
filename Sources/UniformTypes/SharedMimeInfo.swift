import FolioSystem
import Foundation
import SystemPackage

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
        /// The lowercased extension of a simple `*.ext` pattern (no other wildcards), such as `tar.gz`.
        var suffix: String?

        /// The position of `mimeType` in `SharedMimeInfo.mimeTypes`, or -1 when `types` does not list it.
        var typeID: Int32 = -1

        init(weight: Int, mimeType: String, pattern: String, caseSensitive: Bool, typeID: Int32 = -1) {
            self.weight = weight
            self.mimeType = mimeType
            self.typeID = typeID
            self.pattern = pattern
            self.caseSensitive = caseSensitive
            suffix = GlobMatcher.simpleSuffix(pattern)?.asciiLowercased()
        }
    }

    /// The MIME directories read, highest priority first (for lazy comment and magic reads).
    var directories: [String] = []
    /// Canonical MIME types, lowercased, in first-seen order; a type's position is its id.
    var mimeTypes: [String] = []
    /// Canonical MIME type → id.
    private(set) var typeIDs = FoldedKeyTable(capacity: 1024)
    /// Glob patterns, highest weight first, in file order within a weight.
    var globs: [Glob] = []
    /// By type id: the lowercased extensions of its simple `*.ext` globs, heaviest first, no duplicates.
    var extensionsByType: [[String]] = []
    /// By type id: direct parents (`sub-class-of`) as type ids, in file order.
    var parentIDs: [[Int32]] = []
    /// By type id: its aliases, in file order.
    var aliasesByType: [[String]] = []
    /// Alias → alias id; by alias id, the canonical type it names and that type's id (-1 if unknown).
    private var aliasIDs = FoldedKeyTable(capacity: 512)
    private var aliasTargets: [(name: String, id: Int32)] = []

    /// Alias → canonical MIME type.
    var aliases: [String: String] {
        var result: [String: String] = [:]
        for (id, target) in aliasTargets.enumerated() { result[aliasIDs.key(Int32(id))] = target.name }
        return result
    }

    /// Direct parents (`sub-class-of`) of each canonical MIME type that has any.
    var parents: [String: [String]] {
        var result: [String: [String]] = [:]
        for (id, list) in parentIDs.enumerated() where !list.isEmpty {
            result[mimeTypes[id]] = list.map { mimeTypes[Int($0)] }
        }
        return result
    }

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
    ///
    /// This runs at every process start, so it works on bytes: no line is split into arrays, and a
    /// string is lowercased only when it holds an uppercase letter.
    static func load(directories: [String]) -> SharedMimeInfo {
        var info = SharedMimeInfo()
        var files: [(types: [UInt8], directory: String)] = []
        for directory in directories {
            guard let types = readFile(directory + "/types") else { continue }
            files.append((types, directory))
        }
        // Every directory's types first, so that edges and globs may name a type from any of them.
        for (types, directory) in files {
            info.directories.append(directory)
            forEachLine(types) { line in
                guard isMimeType(line), info.typeIDs.insert(bytes: line).inserted else { return }
                info.mimeTypes.append(lowercasedString(line))
            }
        }
        info.parentIDs = Array(repeating: [], count: info.mimeTypes.count)
        info.aliasesByType = Array(repeating: [], count: info.mimeTypes.count)
        info.extensionsByType = Array(repeating: [], count: info.mimeTypes.count)

        var contributedGlobs: [[Glob]] = []
        var clearedGlobs = Set<String>()
        for directory in info.directories {
            if let aliases = readFile(directory + "/aliases") {
                forEachLine(aliases) { line in
                    guard let (alias, canonical) = splitPair(line),
                        !alias.elementsEqual(canonical, by: { FoldedKeyTable.fold($0) == FoldedKeyTable.fold($1) }),
                        info.aliasIDs.insert(bytes: alias).inserted
                    else { return }
                    let target = info.typeIDs.id(ofBytes: canonical) ?? -1
                    info.aliasTargets.append((target >= 0 ? info.mimeTypes[Int(target)] : lowercasedString(canonical), target))
                    if target >= 0 { info.aliasesByType[Int(target)].append(lowercasedString(alias)) }
                }
            }
            var directoryGlobs: [Glob] = []
            var noGlobs: [String] = []
            if let globs = readFile(directory + "/globs2") {
                forEachLine(globs) { line in
                    guard let glob = parseGlobLine(line, types: info.typeIDs, names: info.mimeTypes) else { return }
                    if glob.pattern == "__NOGLOBS__" {
                        noGlobs.append(glob.mimeType)
                    } else if clearedGlobs.isEmpty || !clearedGlobs.contains(glob.mimeType) {
                        // A higher-priority directory's globs for a type replace lower ones only via __NOGLOBS__.
                        directoryGlobs.append(glob)
                    }
                }
            }
            contributedGlobs.append(directoryGlobs)
            clearedGlobs.formUnion(noGlobs)
        }
        for directory in info.directories {
            guard let subclasses = readFile(directory + "/subclasses") else { continue }
            forEachLine(subclasses) { line in
                guard let (child, parent) = splitPair(line), let c = info.typeID(ofBytes: child),
                    let p = info.typeID(ofBytes: parent), c != p
                else { return }
                info.parentIDs[Int(c)].appendIfAbsent(p)
            }
        }
        // A pattern repeated within one globs2 (at two weights) is harmless: the heavier comes first
        // and wins. Only merging directories needs the duplicate check.
        if contributedGlobs.count == 1 {
            info.globs = contributedGlobs[0]
        } else {
            var seen = Set<GlobKey>()
            info.globs = contributedGlobs.joined().filter { seen.insert(GlobKey(mimeType: $0.mimeType, pattern: $0.pattern)).inserted }
        }
        // Stable sort: weight descending, file order within a weight. globs2 is written in weight
        // order already, so this is usually a check.
        if !info.globs.isEmpty && !zip(info.globs, info.globs.dropFirst()).allSatisfy({ $0.weight >= $1.weight }) {
            info.globs = info.globs.enumerated().sorted {
                if $0.element.weight != $1.element.weight { return $0.element.weight > $1.element.weight }
                return $0.offset < $1.offset
            }.map(\.element)
        }
        for glob in info.globs where glob.typeID >= 0 {
            if let ext = glob.suffix { info.extensionsByType[Int(glob.typeID)].appendIfAbsent(ext) }
        }
        return info
    }

    /// The id of a canonical MIME type or of the type an alias names; nil when neither is known.
    func typeID(of mime: String) -> Int32? {
        typeIDs.id(of: mime) ?? knownTarget(ofAlias: aliasIDs.id(of: mime))
    }

    private func typeID(ofBytes bytes: ArraySlice<UInt8>) -> Int32? {
        typeIDs.id(ofBytes: bytes) ?? knownTarget(ofAlias: aliasIDs.id(ofBytes: bytes))
    }

    /// The type id an alias names, when `types` lists that type.
    private func knownTarget(ofAlias alias: Int32?) -> Int32? {
        guard let alias, aliasTargets[Int(alias)].id >= 0 else { return nil }
        return aliasTargets[Int(alias)].id
    }

    private struct GlobKey: Hashable {
        var mimeType: String
        var pattern: String
    }

    /// Parses `weight:type:pattern[:flags]`; nil for a malformed line.
    static func parseGlobLine(_ line: ArraySlice<UInt8>, types: FoldedKeyTable, names: [String]) -> Glob? {
        guard let c1 = line.firstIndex(of: UInt8(ascii: ":")),
            let c2 = line[(c1 + 1)...].firstIndex(of: UInt8(ascii: ":"))
        else { return nil }
        var weight = 0
        for byte in line[..<c1] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), weight <= 100 else { return nil }
            weight = weight * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard c1 > line.startIndex, weight <= 100 else { return nil }
        let patternEnd = line[(c2 + 1)...].firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        guard patternEnd > c2 + 1, isMimeType(line[(c1 + 1)..<c2]) else { return nil }
        let typeBytes = line[(c1 + 1)..<c2]
        let typeID = types.id(ofBytes: typeBytes) ?? -1
        let type = typeID >= 0 ? names[Int(typeID)] : lowercasedString(typeBytes)
        var caseSensitive = false
        if patternEnd < line.endIndex {
            for flag in line[(patternEnd + 1)...].split(separator: UInt8(ascii: ",")) where flag.elementsEqual("cs".utf8) {
                caseSensitive = true
            }
        }
        return Glob(
            weight: weight, mimeType: type, pattern: String(decoding: line[(c2 + 1)..<patternEnd], as: UTF8.self),
            caseSensitive: caseSensitive, typeID: typeID)
    }

    /// Splits `type type` (a subclass or alias line) into two MIME types' bytes; nil if malformed.
    static func splitPair(_ line: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")), space > line.startIndex,
            !line[(space + 1)...].contains(UInt8(ascii: " "))
        else { return nil }
        let first = line[..<space], second = line[(space + 1)...]
        guard isMimeType(first), isMimeType(second) else { return nil }
        return (first, second)
    }

    /// Decodes UTF-8 and lowercases ASCII letters; any other byte is kept for `isMimeType` to judge.
    static func lowercasedString(_ bytes: ArraySlice<UInt8>) -> String {
        guard bytes.contains(where: { FoldedKeyTable.fold($0) != $0 }) else { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes.map(FoldedKeyTable.fold), as: UTF8.self)
    }

    /// Returns the canonical form of a MIME type (resolving aliases), lowercased.
    func canonical(_ mimeType: String) -> String {
        if let alias = aliasIDs.id(of: mimeType) { return aliasTargets[Int(alias)].name }
        return mimeType.asciiLowercased()
    }

    /// Returns whether `text` looks like `media/subtype` with no spaces or control characters.
    static func isMimeType(_ text: String) -> Bool { isMimeType(text.utf8) }

    /// Returns whether the bytes spell `media/subtype`: printable ASCII, no `:`, one `/` with text on both sides.
    static func isMimeType(_ bytes: some Collection<UInt8>) -> Bool {
        var count = 0, slashes = 0, slashAt = -1
        for byte in bytes {
            if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: ":") { return false }
            if byte == UInt8(ascii: "/") {
                slashes += 1
                slashAt = count
            }
            count += 1
        }
        return slashes == 1 && slashAt > 0 && slashAt < count - 1 && count <= 255
    }

    /// Reads a database file; nil when it is missing, unreadable or larger than `maximumFileSize`.
    static func readFile(_ path: String) -> [UInt8]? {
        (try? FilePath(path).readBytes(maximumSize: maximumFileSize)) ?? nil
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
