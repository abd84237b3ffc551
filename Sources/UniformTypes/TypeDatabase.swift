import Synchronization

/// An immutable snapshot of every known type: the system table, apps' exported and imported
/// declarations, and shared-mime-info's MIME types, with conformance closed transitively and tags
/// indexed. `UTType` values keep the snapshot they were made from, so a lookup never takes a lock.
final class TypeDatabase: Sendable {
    struct Entry: Sendable {
        /// The identifier as declared (or generated for a shared-mime-info type).
        var identifier: String
        var origin: TypeDeclaration.Origin
        /// The declaration as given; nil for shared-mime-info types, which `declaration` synthesizes.
        var declared: TypeDeclaration?
        /// Filename extensions, preferred first: the declaration's, then shared-mime-info's.
        var extensions: [String]
        /// MIME types, preferred first: the declaration's, then shared-mime-info's with aliases.
        var mimeTypes: [String]
        /// Direct supertypes, in declared order, as entry indexes.
        var parents: [Int32] = []
        /// Every supertype, transitively, excluding the entry itself. A handful at most, so a linear
        /// scan beats hashing.
        var ancestors: [Int32] = []
        /// The canonical MIME type this entry stands for in shared-mime-info, if any.
        var sharedMimeType: String?

        /// The tags by class, as a declaration holds them.
        var tags: [UTTagClass: [String]] {
            var tags: [UTTagClass: [String]] = [:]
            if !extensions.isEmpty { tags[.filenameExtension] = extensions }
            if !mimeTypes.isEmpty { tags[.mimeType] = mimeTypes }
            return tags
        }

        /// The declaration, with the tags shared-mime-info added.
        var declaration: TypeDeclaration {
            var declaration = declared ?? TypeDeclaration(identifier: identifier, origin: origin)
            declaration.tags = tags
            return declaration
        }
    }

    let entries: [Entry]
    /// Identifier → entry: a key's id is its entry's index.
    private let identifierIndex: FoldedKeyTable
    /// Filename extension → id → the entries carrying it, best first.
    private let extensionKeys: FoldedKeyTable
    private let extensionLists: [[Int32]]
    /// MIME type → id → the entries carrying it, best first.
    private let mimeTagKeys: FoldedKeyTable
    private let mimeTagLists: [[Int32]]
    /// shared-mime-info type id → entry.
    private let entryOfMimeType: [Int32]
    /// Canonical MIME type of a declared tag unknown to shared-mime-info → the first entry carrying it.
    private let declaredMimeIndex: [String: Int32]
    let mimeInfo: SharedMimeInfo
    let globs: GlobMatcher
    /// Problems met while merging (skipped edges, duplicate identifiers), for logging.
    let warnings: [String]

    private let magicCache: Mutex<MimeMagic?>
    private let commentCache: Mutex<[Int32: String]>

    /// Builds a snapshot. Declarations earlier in `declarations` win over later ones with the same
    /// identifier (callers pass system, then exported, then imported). Throws when app declarations
    /// form a conformance cycle.
    ///
    /// Every process builds one at start-up, so this avoids string hashing wherever an integer id
    /// will do: shared-mime-info's types arrive numbered, and their edges as numbers.
    init(declarations: [TypeDeclaration], mimeInfo: SharedMimeInfo) throws(UniformTypeError) {
        var entries: [Entry] = []
        var identifierIndex = FoldedKeyTable(capacity: declarations.count + mimeInfo.mimeTypes.count)
        var warnings: [String] = []
        entries.reserveCapacity(declarations.count + mimeInfo.mimeTypes.count)

        for declaration in declarations {
            let (existing, inserted) = identifierIndex.insert(declaration.identifier)
            if !inserted {
                if entries[Int(existing)].origin != declaration.origin || declaration.origin != .system {
                    warnings.append(
                        "\(declaration.identifier) declared by \(declaration.owner ?? "the system") (\(declaration.origin)) "
                            + "is shadowed by the \(entries[Int(existing)].origin) declaration")
                }
                continue
            }
            entries.append(
                Entry(
                    identifier: declaration.identifier, origin: declaration.origin, declared: declaration,
                    extensions: declaration.tags[.filenameExtension] ?? [], mimeTypes: declaration.tags[.mimeType] ?? []))
        }

        // MIME tags of declared types → the first declared type carrying them: by shared-mime-info
        // type id when it knows the type, by name otherwise.
        var entryOfMimeType = [Int32](repeating: -1, count: mimeInfo.mimeTypes.count)
        var declaredMimeIndex: [String: Int32] = [:]
        for i in entries.indices {
            for mime in entries[i].mimeTypes {
                if let id = mimeInfo.typeID(of: mime) {
                    if entryOfMimeType[Int(id)] < 0 { entryOfMimeType[Int(id)] = Int32(i) }
                } else {
                    let canonical = mimeInfo.canonical(mime)
                    if declaredMimeIndex[canonical] == nil { declaredMimeIndex[canonical] = Int32(i) }
                }
            }
        }

        // Each shared-mime-info type either joins the declared type with its tags or becomes an
        // imported type of its own with a stable identifier.
        for (id, mime) in mimeInfo.mimeTypes.enumerated() {
            let extensions = mimeInfo.extensionsByType[id]
            let aliases = mimeInfo.aliasesByType[id]
            let index = entryOfMimeType[id]
            if index >= 0 {
                entries[Int(index)].extensions = Self.appending(extensions, to: entries[Int(index)].extensions)
                entries[Int(index)].mimeTypes = Self.appending([mime] + aliases, to: entries[Int(index)].mimeTypes)
                if entries[Int(index)].sharedMimeType == nil { entries[Int(index)].sharedMimeType = mime }
                continue
            }
            let identifier = Self.identifier(forMimeType: mime)
            let (newIndex, inserted) = identifierIndex.insert(identifier)
            guard inserted else {
                warnings.append("shared-mime-info type \(mime) collides with \(identifier); skipped")
                continue
            }
            entryOfMimeType[id] = newIndex
            entries.append(
                Entry(
                    identifier: identifier, origin: .sharedMimeInfo, declared: nil, extensions: extensions,
                    mimeTypes: aliases.isEmpty ? [mime] : [mime] + aliases, sharedMimeType: mime))
        }

        // Direct parents: declared conformances, then shared-mime-info edges where at least one end
        // is not a declared type (Apple's declarations stay authoritative between declared types).
        let implied = ImpliedParents { identifierIndex.id(of: $0) }
        for i in entries.indices {
            var parents: [Int32] = []
            for parent in entries[i].declared?.conformsTo ?? [] {
                if let p = identifierIndex.id(of: parent), p != Int32(i) { parents.appendIfAbsent(p) }
            }
            if let mime = entries[i].sharedMimeType, let id = mimeInfo.typeID(of: mime) {
                let isDeclared = entries[i].origin != .sharedMimeInfo
                for parentID in mimeInfo.parentIDs[Int(id)] {
                    let p = entryOfMimeType[Int(parentID)]
                    guard p >= 0, p != Int32(i) else { continue }
                    if isDeclared && entries[Int(p)].origin != .sharedMimeInfo { continue }
                    parents.appendIfAbsent(p)
                }
                if !isDeclared {
                    implied.add(to: &parents, forMimeType: mime, excluding: Int32(i))
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
            var ancestors: [Int32] = []
            for p in entries[i].parents {
                let pi = Int(p)
                if state[pi] == 1 {
                    let a = entries[i], b = entries[pi]
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
                ancestors.appendIfAbsent(p)
                for q in entries[pi].ancestors { ancestors.appendIfAbsent(q) }
            }
            entries[i].parents = kept
            entries[i].ancestors = ancestors
            state[i] = 2
        }
        for i in entries.indices where state[i] == 0 { try visit(i) }

        // For one tag, public types come first, then by origin, then in declaration order. The
        // lists stay ordered as they grow; most hold a single entry.
        var extensionKeys = FoldedKeyTable(capacity: entries.count * 2)
        var extensionLists: [[Int32]] = []
        var mimeTagKeys = FoldedKeyTable(capacity: entries.count * 2)
        var mimeTagLists: [[Int32]] = []
        let ranks = entries.map { Self.tagRank($0) }
        for (i, entry) in entries.enumerated() {
            for value in entry.extensions {
                let (id, inserted) = extensionKeys.insert(value.trimmedTag())
                if inserted { extensionLists.append([]) }
                extensionLists[Int(id)].insertRanked(Int32(i), ranks: ranks)
            }
            for value in entry.mimeTypes {
                let (id, inserted) = mimeTagKeys.insert(value.trimmedTag())
                if inserted { mimeTagLists.append([]) }
                mimeTagLists[Int(id)].insertRanked(Int32(i), ranks: ranks)
            }
        }

        self.entries = entries
        self.identifierIndex = identifierIndex
        self.extensionKeys = extensionKeys
        self.extensionLists = extensionLists
        self.mimeTagKeys = mimeTagKeys
        self.mimeTagLists = mimeTagLists
        self.entryOfMimeType = entryOfMimeType
        self.declaredMimeIndex = declaredMimeIndex
        self.mimeInfo = mimeInfo
        self.globs = GlobMatcher(globs: mimeInfo.globs)
        self.warnings = warnings
        magicCache = Mutex(nil)
        commentCache = Mutex([:])
    }

    /// Orders the entries sharing one tag: public types first, then by origin.
    private static func tagRank(_ entry: Entry) -> Int {
        (TypeIdentifier.isPublic(entry.identifier) ? 0 : 4) + entry.origin.rawValue
    }

    private static func appending(_ extra: [String], to existing: [String]?) -> [String] {
        var result = existing ?? []
        var seen = Set(result.map { $0.asciiLowercased() })
        for value in extra where seen.insert(value.asciiLowercased()).inserted { result.append(value) }
        return result
    }

    /// The stable identifier of a shared-mime-info type no declaration claims:
    /// `org.freedesktop.mime.<media>.<subtype>`, with any character a type identifier may not hold
    /// written as `-` and two uppercase hex digits (`image/svg+xml` → `…image.svg-2Bxml`).
    static func identifier(forMimeType mime: String) -> String {
        let prefix = "org.freedesktop.mime.".utf8
        var out: [UInt8] = []
        out.reserveCapacity(prefix.count + mime.utf8.count + 8)
        out.append(contentsOf: prefix)
        for byte in mime.utf8 {
            switch byte {
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "."))
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
                out.append(byte)
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out += [UInt8(ascii: "-"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Lookups

    func index(ofIdentifier identifier: String) -> Int32? { identifierIndex.id(of: identifier) }

    func indexes(forTag tag: String, tagClass: UTTagClass) -> [Int32] {
        switch tagClass {
        case .filenameExtension:
            return extensionKeys.id(of: tag.trimmedTag()).map { extensionLists[Int($0)] } ?? []
        case .mimeType:
            let trimmed = tag.trimmedTag()
            if let id = mimeTagKeys.id(of: trimmed) { return mimeTagLists[Int(id)] }
            // An alias of a type declared under its canonical name only.
            return mimeTagKeys.id(of: mimeInfo.canonical(trimmed)).map { mimeTagLists[Int($0)] } ?? []
        default:
            return []
        }
    }

    func index(forMimeType mime: String) -> Int32? {
        if let id = mimeInfo.typeID(of: mime) {
            let index = entryOfMimeType[Int(id)]
            return index >= 0 ? index : nil
        }
        return declaredMimeIndex[mimeInfo.canonical(mime)]
    }

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

extension Array where Element: Equatable {
    /// Appends `element` unless the array holds it already (for the short lists of the type graph).
    mutating func appendIfAbsent(_ element: Element) {
        if !contains(element) { append(element) }
    }
}

extension Array where Element == Int32 {
    /// Inserts an entry index into a tag's list, keeping it ordered by rank then index; no duplicates.
    fileprivate mutating func insertRanked(_ index: Int32, ranks: [Int]) {
        guard !contains(index) else { return }
        let rank = ranks[Int(index)]
        let position = firstIndex { ranks[Int($0)] > rank || (ranks[Int($0)] == rank && $0 > index) } ?? endIndex
        insert(index, at: position)
    }
}

extension String {
    func range(of needle: String, range: Range<String.Index>? = nil) -> Range<String.Index>? {
        self[range ?? startIndex..<endIndex].firstRange(of: needle)
    }
}
