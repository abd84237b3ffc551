import Synchronization

/// An immutable snapshot of every known type: the system table, apps' exported and imported
/// declarations, and shared-mime-info's MIME types, with conformance closed transitively and tags
/// indexed. `UTType` values keep the snapshot they were made from, so a lookup never takes a lock.
final class TypeDatabase: Sendable {
    struct Entry: Sendable {
        var declaration: TypeDeclaration
        /// Direct supertypes, in declared order, as entry indexes.
        var parents: [Int32]
        /// Every supertype, transitively, excluding the entry itself.
        var ancestors: Set<Int32>
        /// The canonical MIME type this entry stands for in shared-mime-info, if any.
        var sharedMimeType: String?
    }

    let entries: [Entry]
    private let identifierIndex: [String: Int32]
    private let tagIndex: [UTTagClass: [String: [Int32]]]
    /// Canonical MIME type → entry.
    private let mimeIndex: [String: Int32]
    let mimeInfo: SharedMimeInfo
    let globs: GlobMatcher
    /// Problems met while merging (skipped edges, duplicate identifiers), for logging.
    let warnings: [String]

    private let magicCache: Mutex<MimeMagic?> = Mutex(nil)
    private let commentCache: Mutex<[Int32: String]> = Mutex([:])

    /// Builds a snapshot. Declarations earlier in `declarations` win over later ones with the same
    /// identifier (callers pass system, then exported, then imported). Throws when app declarations
    /// form a conformance cycle.
    init(declarations: [TypeDeclaration], mimeInfo: SharedMimeInfo) throws(UniformTypeError) {
        var entries: [Entry] = []
        var identifierIndex: [String: Int32] = [:]
        var warnings: [String] = []
        entries.reserveCapacity(declarations.count + mimeInfo.mimeTypes.count)

        for declaration in declarations {
            let key = TypeIdentifier.key(declaration.identifier)
            if let existing = identifierIndex[key] {
                if entries[Int(existing)].declaration.origin != declaration.origin || declaration.origin != .system {
                    warnings.append(
                        "\(declaration.identifier) declared by \(declaration.owner ?? "the system") (\(declaration.origin)) "
                            + "is shadowed by the \(entries[Int(existing)].declaration.origin) declaration")
                }
                continue
            }
            identifierIndex[key] = Int32(entries.count)
            entries.append(Entry(declaration: declaration, parents: [], ancestors: [], sharedMimeType: nil))
        }

        // MIME tags of declared types → the first declared type carrying them.
        var mimeIndex: [String: Int32] = [:]
        for (i, entry) in entries.enumerated() {
            for mime in entry.declaration.tags[.mimeType] ?? [] {
                let canonical = mimeInfo.canonical(mime)
                if mimeIndex[canonical] == nil { mimeIndex[canonical] = Int32(i) }
            }
        }

        // Each shared-mime-info type either joins the declared type with its tags or becomes an
        // imported type of its own with a stable identifier.
        var globExtensions: [String: [String]] = [:]
        for glob in mimeInfo.globs {
            if let suffix = GlobMatcher.simpleSuffix(glob.pattern) {
                let ext = suffix.lowercased()
                if !(globExtensions[glob.mimeType]?.contains(ext) ?? false) {
                    globExtensions[glob.mimeType, default: []].append(ext)
                }
            }
        }
        var aliasesOf: [String: [String]] = [:]
        for (alias, canonical) in mimeInfo.aliases.sorted(by: { $0.key < $1.key }) {
            aliasesOf[canonical, default: []].append(alias)
        }
        for mime in mimeInfo.mimeTypes {
            let extensions = globExtensions[mime] ?? []
            let mimeTags = [mime] + (aliasesOf[mime] ?? [])
            if let index = mimeIndex[mime] {
                var declaration = entries[Int(index)].declaration
                declaration.tags[.filenameExtension] = Self.appending(extensions, to: declaration.tags[.filenameExtension])
                declaration.tags[.mimeType] = Self.appending(mimeTags, to: declaration.tags[.mimeType])
                entries[Int(index)].declaration = declaration
                if entries[Int(index)].sharedMimeType == nil { entries[Int(index)].sharedMimeType = mime }
                continue
            }
            let identifier = Self.identifier(forMimeType: mime)
            let key = TypeIdentifier.key(identifier)
            guard identifierIndex[key] == nil else {
                warnings.append("shared-mime-info type \(mime) collides with \(identifier); skipped")
                continue
            }
            var tags: [UTTagClass: [String]] = [.mimeType: mimeTags]
            if !extensions.isEmpty { tags[.filenameExtension] = extensions }
            identifierIndex[key] = Int32(entries.count)
            mimeIndex[mime] = Int32(entries.count)
            entries.append(
                Entry(
                    declaration: TypeDeclaration(identifier: identifier, tags: tags, origin: .sharedMimeInfo),
                    parents: [], ancestors: [], sharedMimeType: mime))
        }

        // Direct parents: declared conformances, then shared-mime-info edges where at least one end
        // is not a declared type (Apple's declarations stay authoritative between declared types).
        let dataIndex = identifierIndex["public.data"]
        for i in entries.indices {
            var parents: [Int32] = []
            for parent in entries[i].declaration.conformsTo {
                if let p = identifierIndex[TypeIdentifier.key(parent)], p != Int32(i), !parents.contains(p) {
                    parents.append(p)
                }
            }
            if let mime = entries[i].sharedMimeType {
                let isDeclared = entries[i].declaration.origin != .sharedMimeInfo
                for parentMime in mimeInfo.parents[mime] ?? [] {
                    guard let p = mimeIndex[mimeInfo.canonical(parentMime)], p != Int32(i), !parents.contains(p) else {
                        continue
                    }
                    if isDeclared && entries[Int(p)].declaration.origin != .sharedMimeInfo { continue }
                    parents.append(p)
                }
                if !isDeclared {
                    for implied in Self.impliedParents(of: mime) {
                        if let p = identifierIndex[implied], p != Int32(i), !parents.contains(p) { parents.append(p) }
                    }
                    if parents.isEmpty, let dataIndex, !mime.hasPrefix("inode/") { parents.append(dataIndex) }
                }
            }
            entries[i].parents = parents
        }

        // Transitive closure by depth-first search. A cycle drops the edge that closes it; a cycle
        // among app declarations refuses the whole snapshot.
        var state = [UInt8](repeating: 0, count: entries.count)  // 0 new, 1 on stack, 2 done
        func visit(_ i: Int) throws(UniformTypeError) {
            state[i] = 1
            var kept: [Int32] = []
            var ancestors = Set<Int32>()
            for p in entries[i].parents {
                let pi = Int(p)
                if state[pi] == 1 {
                    let a = entries[i].declaration, b = entries[pi].declaration
                    if a.origin == .exported || a.origin == .imported || b.origin == .exported || b.origin == .imported {
                        throw UniformTypeError(
                            .conformanceCycle,
                            "conformance cycle: \(a.identifier) → \(b.identifier) → … → \(a.identifier)")
                    }
                    warnings.append("dropped conformance \(a.identifier) → \(b.identifier): it closes a cycle")
                    continue
                }
                if state[pi] == 0 { try visit(pi) }
                kept.append(p)
                ancestors.insert(p)
                ancestors.formUnion(entries[pi].ancestors)
            }
            entries[i].parents = kept
            entries[i].ancestors = ancestors
            state[i] = 2
        }
        for i in entries.indices where state[i] == 0 { try visit(i) }

        var tagIndex: [UTTagClass: [String: [Int32]]] = [:]
        for (i, entry) in entries.enumerated() {
            for (tagClass, values) in entry.declaration.tags {
                for value in values {
                    let tag = tagClass.normalize(value)
                    if !(tagIndex[tagClass]?[tag]?.contains(Int32(i)) ?? false) {
                        tagIndex[tagClass, default: [:]][tag, default: []].append(Int32(i))
                    }
                }
            }
        }
        // For one tag, public types come first, then by origin, then in declaration order.
        for (tagClass, byTag) in tagIndex {
            for (tag, list) in byTag {
                tagIndex[tagClass]![tag] = list.sorted { a, b in
                    let da = entries[Int(a)].declaration, db = entries[Int(b)].declaration
                    let pa = TypeIdentifier.isPublic(da.identifier), pb = TypeIdentifier.isPublic(db.identifier)
                    if pa != pb { return pa }
                    if da.origin != db.origin { return da.origin < db.origin }
                    return a < b
                }
            }
        }

        self.entries = entries
        self.identifierIndex = identifierIndex
        self.tagIndex = tagIndex
        self.mimeIndex = mimeIndex
        self.mimeInfo = mimeInfo
        self.globs = GlobMatcher(globs: mimeInfo.globs)
        self.warnings = warnings
    }

    private static func appending(_ extra: [String], to existing: [String]?) -> [String] {
        var result = existing ?? []
        var seen = Set(result.map { $0.lowercased() })
        for value in extra where seen.insert(value.lowercased()).inserted { result.append(value) }
        return result
    }

    /// The parents a shared-mime-info type gets from its media type, so the functional tree covers it.
    private static func impliedParents(of mime: String) -> [String] {
        var result: [String] = []
        if mime.hasSuffix("+xml") { result.append("public.xml") }
        if mime.hasSuffix("+json") { result.append("public.json") }
        if mime.hasSuffix("+zip") { result.append("public.zip-archive") }
        switch mime.prefix(while: { $0 != "/" }) {
        case "text": if result.isEmpty { result.append("public.plain-text") }
        case "image": result.append("public.image")
        case "audio": result.append("public.audio")
        case "video": result.append("public.movie")
        case "font": result.append("public.font")
        case "model": result.append("public.3d-content")
        case "inode", "x-content": result.append("public.item")
        default: break
        }
        return result
    }

    /// The stable identifier of a shared-mime-info type no declaration claims:
    /// `org.freedesktop.mime.<media>.<subtype>`, with any character a type identifier may not hold
    /// written as `-` and two uppercase hex digits (`image/svg+xml` → `…image.svg-2Bxml`).
    static func identifier(forMimeType mime: String) -> String {
        var out = "org.freedesktop.mime."
        for byte in mime.utf8 {
            switch byte {
            case UInt8(ascii: "/"): out.append(".")
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "-" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    // MARK: Lookups

    func index(ofIdentifier identifier: String) -> Int32? { identifierIndex[TypeIdentifier.key(identifier)] }

    func indexes(forTag tag: String, tagClass: UTTagClass) -> [Int32] {
        var normalized = tagClass.normalize(tag)
        if tagClass == .mimeType { normalized = mimeInfo.canonical(normalized) }
        return tagIndex[tagClass]?[normalized] ?? []
    }

    func index(forMimeType mime: String) -> Int32? { mimeIndex[mimeInfo.canonical(mime)] }

    func conforms(_ index: Int32, to other: Int32) -> Bool {
        index == other || entries[Int(index)].ancestors.contains(other)
    }

    /// Supertypes ordered nearest first (breadth-first over declared order), excluding `index`.
    func supertypesNearestFirst(of index: Int32) -> [Int32] {
        var result: [Int32] = []
        var seen: Set<Int32> = [index]
        var frontier = [index]
        while !frontier.isEmpty {
            var next: [Int32] = []
            for i in frontier {
                for p in entries[Int(i)].parents where seen.insert(p).inserted {
                    result.append(p)
                    next.append(p)
                }
            }
            frontier = next
        }
        return result
    }

    /// The magic database, parsed on first use from the highest-priority directory that has one.
    func magic() -> MimeMagic {
        magicCache.withLock { cache in
            if let cache { return cache }
            var magic = MimeMagic()
            for directory in mimeInfo.directories {
                guard let bytes = SharedMimeInfo.readFile(directory + "/magic") else { continue }
                if let parsed = try? MimeMagic(bytes: bytes) {
                    magic = parsed
                    break
                }
            }
            cache = magic
            return magic
        }
    }

    /// The English `comment` of a shared-mime-info type, read on first use from `<dir>/<mime>.xml`.
    func sharedMimeComment(of index: Int32) -> String? {
        guard let mime = entries[Int(index)].sharedMimeType else { return nil }
        if let cached = commentCache.withLock({ $0[index] }) { return cached.isEmpty ? nil : cached }
        var comment = ""
        for directory in mimeInfo.directories {
            guard let bytes = SharedMimeInfo.readFile(directory + "/" + mime + ".xml") else { continue }
            if let found = Self.firstUnlocalizedComment(in: bytes) {
                comment = found
                break
            }
        }
        commentCache.withLock { $0[index] = comment }
        return comment.isEmpty ? nil : comment
    }

    /// Finds `<comment>…</comment>` with no `xml:lang`, decoding the five predefined entities.
    static func firstUnlocalizedComment(in bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let range = text.range(of: "<comment>"), let end = text.range(of: "</comment>", range: range.upperBound..<text.endIndex)
        else { return nil }
        return String(text[range.upperBound..<end.lowerBound])
            .replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&apos;", with: "'").replacing("&amp;", with: "&")
    }
}

extension String {
    func range(of needle: String, range: Range<String.Index>? = nil) -> Range<String.Index>? {
        self[range ?? startIndex..<endIndex].firstRange(of: needle)
    }
}
