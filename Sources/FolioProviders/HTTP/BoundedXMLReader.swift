import Folio
import FolioSystem
import Foundation

/// An XML element's name: its namespace URI (resolved from its prefix) and its local name.
struct XMLName: Equatable, Sendable {
    var namespace: String
    var local: String
}

/// Why a server's XML reply was refused.
struct XMLRefusal: Error, CustomStringConvertible, Equatable {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What a reply means, told element by element by ``BoundedXMLReader``.
protocol BoundedXMLHandler {
    /// An element opened inside `parent` (nil for the root).
    mutating func began(_ element: XMLName, within parent: XMLName?) throws(XMLRefusal)
    /// An element closed, with the text directly inside it (entities decoded).
    mutating func ended(_ element: XMLName, within parent: XMLName?, text: String) throws(XMLRefusal)
}

/// A bounded reader of the XML servers send (WebDAV multistatus, S3 listings and errors): elements,
/// attributes, namespaces, the five entities and character references, CDATA, comments, and nothing
/// a server could abuse: no DTD (so no entity expansion or external entities), at most 32 levels, a
/// cap on every text. A body that breaks a rule is refused whole, so a damaged listing can never
/// look like a shorter one.
struct BoundedXMLReader<Handler: BoundedXMLHandler> {
    static var maximumDepth: Int { 32 }
    static var maximumText: Int { 64 << 10 }
    static var maximumNamespaces: Int { 256 }

    private let bytes: [UInt8]
    private var index = 0
    /// The namespace declarations in scope, innermost last: a prefix's bytes (where the declaring
    /// attribute wrote it; empty for the default namespace) and its namespace. A declaration is
    /// looked up from the end, so an inner one hides an outer one of the same prefix.
    private var bindings: [(prefix: Range<Int>, namespace: String)] = []
    /// How many declarations were in scope before each open element's own.
    private var bindingsBefore: [Int] = []
    private var open: [XMLName] = []
    /// Where the names of the open elements are written: an end tag must repeat its start tag's.
    private var openNames: [Range<Int>] = []
    /// Names already resolved, by namespace and local name, so that a listing's thousands of
    /// elements share a few strings (at most ``maximumResolvedNames``).
    private var resolvedNames: [ResolvedKey: XMLName] = [:]
    private static var maximumResolvedNames: Int { 1024 }

    /// A resolved name's key: its namespace and its local name's bytes, hashed and compared as a
    /// block of bytes (an `ArraySlice`'s own hashing takes its bytes one call at a time).
    private struct ResolvedKey: Hashable {
        var namespace: String
        var local: ArraySlice<UInt8>

        static func == (a: Self, b: Self) -> Bool {
            a.namespace == b.namespace && a.local.withUnsafeBytes { x in b.local.withUnsafeBytes { y in ByteOrder.equal(x, y) } }
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(namespace)
            local.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
    private var text: [UInt8] = []
    private var handler: Handler

    private init(_ bytes: [UInt8], handler: Handler) {
        self.bytes = bytes
        self.handler = handler
    }

    /// Reads `bytes` into `handler`, returning it with everything it was told.
    static func read(_ bytes: [UInt8], into handler: Handler) throws(XMLRefusal) -> Handler {
        var reader = BoundedXMLReader(bytes, handler: handler)
        try reader.run()
        return reader.handler
    }

    private mutating func run() throws(XMLRefusal) {
        var sawRoot = false
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "<") {
                if starts("<?") {
                    try skip(past: "?>")
                } else if starts("<!--") {
                    try skip(past: "-->")
                } else if starts("<![CDATA[") {
                    index += 9
                    let start = index
                    try skip(past: "]]>")
                    try appendText(bytes[start..<(index - 3)])
                } else if starts("<!") {
                    throw XMLRefusal("a document type or declaration (refused: no DTDs)")
                } else if starts("</") {
                    try closeTag()
                } else {
                    if open.isEmpty {
                        guard !sawRoot else { throw XMLRefusal("a second root element") }
                        sawRoot = true
                    }
                    try openTag()
                }
            } else {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
                if open.isEmpty {
                    guard bytes[start..<index].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }) else {
                        throw XMLRefusal("text outside the root element")
                    }
                } else {
                    // Checked as UTF-8 when the element ends; only text with references is decoded here.
                    let raw = bytes[start..<index]
                    try appendText(raw.contains(UInt8(ascii: "&")) ? ArraySlice(Array(try decode(raw).utf8)) : raw)
                }
            }
        }
        guard sawRoot, open.isEmpty else { throw XMLRefusal("the document ends inside an element") }
    }

    // MARK: Tags

    private mutating func openTag() throws(XMLRefusal) {
        index += 1
        let nameRange = try readName()
        var attributes: [(range: Range<Int>, value: String)] = []
        var selfClosing = false
        while true {
            skipSpace()
            guard index < bytes.count else { throw XMLRefusal("the document ends inside a tag") }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                break
            }
            if starts("/>") {
                index += 2
                selfClosing = true
                break
            }
            let attribute = try readName()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw XMLRefusal("an attribute without a value") }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw XMLRefusal("an attribute value without quotes")
            }
            let quote = bytes[index]
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != quote {
                guard bytes[index] != UInt8(ascii: "<") else { throw XMLRefusal("“<” in an attribute value") }
                index += 1
            }
            guard index < bytes.count else { throw XMLRefusal("the document ends inside an attribute") }
            let value = try decode(bytes[start..<index])
            index += 1
            attributes.append((attribute, value))
        }
        guard open.count < Self.maximumDepth else { throw XMLRefusal("elements nested deeper than \(Self.maximumDepth)") }
        bindingsBefore.append(bindings.count)
        for (name, value) in attributes where name.count >= 5 && bytes[name.prefix(5)].elementsEqual("xmlns".utf8) {
            let rest = name.dropFirst(5)
            if rest.isEmpty {
                bindings.append((rest, value))
            } else if bytes[rest.lowerBound] == UInt8(ascii: ":") {
                bindings.append((rest.dropFirst(), value))
            }
        }
        guard bindings.count <= Self.maximumNamespaces else { throw XMLRefusal("more than \(Self.maximumNamespaces) namespace declarations in scope") }
        let resolved = try resolve(nameRange)
        let parent = open.last
        open.append(resolved)
        openNames.append(nameRange)
        text.removeAll(keepingCapacity: true)
        try handler.began(resolved, within: parent)
        if selfClosing { try endElement() }
    }

    private mutating func closeTag() throws(XMLRefusal) {
        index += 2
        let name = try readName()
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else { throw XMLRefusal("a malformed end tag") }
        index += 1
        guard let top = openNames.last, same(top, name) else {
            throw XMLRefusal("an end tag </\(text(of: name))> that does not match")
        }
        try endElement()
    }

    private mutating func endElement() throws(XMLRefusal) {
        let element = open.removeLast()
        openNames.removeLast()
        bindings.removeSubrange(bindingsBefore.removeLast()...)
        let content: String
        if text.isEmpty {
            content = ""
        } else {
            guard let valid = String(validUTF8: text) else { throw XMLRefusal("text that is not UTF-8") }
            content = valid
        }
        try handler.ended(element, within: open.last, text: content)
        text.removeAll(keepingCapacity: true)
    }

    private mutating func resolve(_ name: Range<Int>) throws(XMLRefusal) -> XMLName {
        let key: ResolvedKey
        if let colon = bytes[name].firstIndex(of: UInt8(ascii: ":")) {
            guard let namespace = namespace(of: name.lowerBound..<colon) else {
                throw XMLRefusal("an undeclared namespace prefix “\(text(of: name.lowerBound..<colon))”")
            }
            key = ResolvedKey(namespace: namespace, local: bytes[(colon + 1)..<name.upperBound])
        } else {
            key = ResolvedKey(namespace: namespace(of: name.lowerBound..<name.lowerBound) ?? "", local: bytes[name])
        }
        if let known = resolvedNames[key] { return known }
        let resolved = XMLName(namespace: key.namespace, local: String(decoding: key.local, as: UTF8.self))
        if resolvedNames.count < Self.maximumResolvedNames { resolvedNames[key] = resolved }
        return resolved
    }

    /// The namespace the prefix written at `prefix` stands for here (an empty range: the default
    /// namespace), or nil when none is declared.
    private func namespace(of prefix: Range<Int>) -> String? {
        for binding in bindings.reversed() where same(binding.prefix, prefix) { return binding.namespace }
        return nil
    }

    // MARK: Text

    private mutating func appendText(_ raw: ArraySlice<UInt8>) throws(XMLRefusal) {
        guard text.count + raw.count <= Self.maximumText else { throw XMLRefusal("a text longer than \(Self.maximumText) bytes") }
        text.append(contentsOf: raw)
    }

    /// `raw` with entities and character references decoded (``XMLEntities``); unknown ones are refused.
    private func decode(_ raw: ArraySlice<UInt8>) throws(XMLRefusal) -> String {
        do {
            return try XMLEntities.decode(raw)
        } catch {
            throw XMLRefusal(error.reason)
        }
    }

    // MARK: Scanning

    /// Whether the bytes at `a` and at `b` are the same.
    private func same(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        bytes[a].withUnsafeBytes { x in bytes[b].withUnsafeBytes { y in ByteOrder.equal(x, y) } }
    }

    private func starts(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return literal.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
    }

    private mutating func skip(past literal: StaticString) throws(XMLRefusal) {
        while index < bytes.count {
            if starts(literal) {
                index += literal.utf8CodeUnitCount
                return
            }
            index += 1
        }
        throw XMLRefusal("the document ends before “\(literal)”")
    }

    private mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0a || bytes[index] == 0x0d { index += 1 }
    }

    /// Where the name at the reading position is written (checked as UTF-8).
    private mutating func readName() throws(XMLRefusal) -> Range<Int> {
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: "=")
            {
                break
            }
            index += 1
        }
        guard index > start, index - start <= 256, bytes[start..<index].allSatisfy({ $0 < 0x80 }) || String(validUTF8: bytes[start..<index]) != nil else {
            throw XMLRefusal("a missing or malformed name")
        }
        return start..<index
    }

    /// The name written at `range` (read by ``readName()``, so UTF-8).
    private func text(of range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }
}
