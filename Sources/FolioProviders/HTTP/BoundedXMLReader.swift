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
///
/// It reads the body in place, through a pointer: a listing of 10,000 files is some 5 MB of
/// elements, and every byte is looked at once (text runs found with `memchr`), every name resolved
/// through a small table of the names seen, and a text made a string only when its element ends.
struct BoundedXMLReader<Handler: BoundedXMLHandler> {
    static var maximumDepth: Int { 32 }
    static var maximumText: Int { 64 << 10 }
    static var maximumNamespaces: Int { 256 }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// The namespace declarations in scope, innermost last: a prefix's bytes (where the declaring
    /// attribute wrote it; empty for the default namespace) and its namespace. A declaration is
    /// looked up from the end, so an inner one hides an outer one of the same prefix.
    private var bindings: [(prefix: Range<Int>, namespace: DeclaredNamespace)] = []
    /// How many declarations were in scope before each open element's own.
    private var bindingsBefore: [Int] = []
    private var open: [XMLName] = []
    /// Where the names of the open elements are written: an end tag must repeat its start tag's.
    private var openNames: [Range<Int>] = []
    /// The namespaces declared so far, each once (the first, empty, is no namespace): a listing
    /// declares the same few again in each of its thousands of responses, so each declaration is a
    /// comparison of bytes here rather than a new string.
    private var namespaces = NamespaceTable()
    /// Names already resolved, by their namespace and local name: a listing's thousands of elements
    /// share a few names, and so their strings.
    private var resolvedNames = ResolvedNames()
    /// The text directly inside the innermost open element: where it is written while it is one
    /// run of plain text (the common case), else gathered here (several runs, references, CDATA).
    private var textRun: Range<Int>?
    private var gathered: [UInt8] = []
    private var isGathered = false
    private var handler: Handler

    private init(_ bytes: UnsafeBufferPointer<UInt8>, handler: Handler) {
        self.bytes = bytes
        self.handler = handler
    }

    /// Reads `bytes` into `handler`, returning it with everything it was told.
    static func read(_ bytes: [UInt8], into handler: Handler) throws(XMLRefusal) -> Handler {
        try bytes.withUnsafeBufferPointer { buffer throws(XMLRefusal) in
            var reader = BoundedXMLReader(buffer, handler: handler)
            try reader.run()
            return reader.handler
        }
    }

    private mutating func run() throws(XMLRefusal) {
        var sawRoot = false
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                let start = index
                index = position(of: UInt8(ascii: "<"), from: index) ?? bytes.count
                if open.isEmpty {
                    guard bytes[start..<index].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }) else {
                        throw XMLRefusal("text outside the root element")
                    }
                } else {
                    try appendText(start..<index)
                }
                continue
            }
            switch index + 1 < bytes.count ? bytes[index + 1] : 0 {
            case UInt8(ascii: "/"):
                try closeTag()
            case UInt8(ascii: "?"):
                try skip(past: "?>")
            case UInt8(ascii: "!"):
                if starts("<!--") {
                    try skip(past: "-->")
                } else if starts("<![CDATA[") {
                    index += 9
                    let start = index
                    try skip(past: "]]>")
                    try appendRaw(start..<(index - 3))
                } else {
                    throw XMLRefusal("a document type or declaration (refused: no DTDs)")
                }
            default:
                if open.isEmpty {
                    guard !sawRoot else { throw XMLRefusal("a second root element") }
                    sawRoot = true
                }
                try openTag()
            }
        }
        guard sawRoot, open.isEmpty else { throw XMLRefusal("the document ends inside an element") }
    }

    // MARK: Tags

    private mutating func openTag() throws(XMLRefusal) {
        index += 1
        let nameRange = try readName()
        guard open.count < Self.maximumDepth else { throw XMLRefusal("elements nested deeper than \(Self.maximumDepth)") }
        let before = bindings.count
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
            index = position(of: quote, from: index) ?? bytes.count
            guard index < bytes.count else { throw XMLRefusal("the document ends inside an attribute") }
            let value = start..<index
            index += 1
            if position(of: UInt8(ascii: "<"), in: value) != nil { throw XMLRefusal("“<” in an attribute value") }
            // A declaration: `xmlns` (the default namespace) or `xmlns:prefix`.
            if attribute.count >= 5, same(attribute.prefix(5), "xmlns"), attribute.count == 5 || bytes[attribute.lowerBound + 5] == UInt8(ascii: ":") {
                let namespace = try namespaces.declared(value, in: bytes)
                bindings.append((attribute.count == 5 ? attribute.suffix(0) : attribute.dropFirst(6), namespace))
            } else if !isPlain(value) {
                _ = try decode(value)
            }
        }
        guard bindings.count <= Self.maximumNamespaces else { throw XMLRefusal("more than \(Self.maximumNamespaces) namespace declarations in scope") }
        bindingsBefore.append(before)
        let resolved = try resolve(nameRange)
        let parent = open.last
        open.append(resolved)
        openNames.append(nameRange)
        clearText()
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
        if isGathered {
            guard let valid = String(validUTF8: gathered) else { throw XMLRefusal("text that is not UTF-8") }
            content = valid
        } else if let run = textRun {
            guard let valid = String(validUTF8: bytes.raw(run)) else { throw XMLRefusal("text that is not UTF-8") }
            content = valid
        } else {
            content = ""
        }
        try handler.ended(element, within: open.last, text: content)
        clearText()
    }

    private mutating func resolve(_ name: Range<Int>) throws(XMLRefusal) -> XMLName {
        let namespace: DeclaredNamespace
        let local: Range<Int>
        if let colon = position(of: UInt8(ascii: ":"), in: name) {
            guard let declared = self.namespace(of: name.lowerBound..<colon) else {
                throw XMLRefusal("an undeclared namespace prefix “\(text(of: name.lowerBound..<colon))”")
            }
            namespace = declared
            local = (colon + 1)..<name.upperBound
        } else {
            namespace = self.namespace(of: name.lowerBound..<name.lowerBound) ?? DeclaredNamespace(number: 0, name: "")
            local = name
        }
        guard let number = namespace.number else {
            return XMLName(namespace: namespace.name, local: String(decoding: UnsafeBufferPointer(rebasing: bytes[local]), as: UTF8.self))
        }
        return resolvedNames.name(number, namespace.name, local, in: bytes)
    }

    /// The namespace the prefix written at `prefix` stands for here (an empty range: the default
    /// namespace), or nil when none is declared.
    private func namespace(of prefix: Range<Int>) -> DeclaredNamespace? {
        for binding in bindings.reversed() where same(binding.prefix, prefix) { return binding.namespace }
        return nil
    }

    // MARK: Text

    private mutating func clearText() {
        textRun = nil
        if isGathered {
            gathered.removeAll(keepingCapacity: true)
            isGathered = false
        }
    }

    /// Adds a run of text as written: decoded when it holds references (checked as UTF-8 when its
    /// element ends).
    private mutating func appendText(_ run: Range<Int>) throws(XMLRefusal) {
        guard position(of: UInt8(ascii: "&"), in: run) != nil else { return try appendRaw(run) }
        let decoded = Array(try decode(run).utf8)
        try decoded.withUnsafeBufferPointer { utf8 throws(XMLRefusal) in try gather(utf8) }
    }

    /// Adds bytes taken as they are (a run of plain text, a CDATA section).
    private mutating func appendRaw(_ run: Range<Int>) throws(XMLRefusal) {
        if !isGathered, textRun == nil {
            guard run.count <= Self.maximumText else { throw XMLRefusal("a text longer than \(Self.maximumText) bytes") }
            textRun = run
        } else {
            try gather(UnsafeBufferPointer(rebasing: bytes[run]))
        }
    }

    private mutating func gather(_ more: UnsafeBufferPointer<UInt8>) throws(XMLRefusal) {
        if !isGathered {
            isGathered = true
            if let run = textRun {
                gathered.append(contentsOf: bytes[run])
                textRun = nil
            }
        }
        guard gathered.count + more.count <= Self.maximumText else { throw XMLRefusal("a text longer than \(Self.maximumText) bytes") }
        gathered.append(contentsOf: more)
    }

    /// The bytes at `range` with entities and character references decoded (``XMLEntities``);
    /// unknown ones are refused.
    private func decode(_ range: Range<Int>) throws(XMLRefusal) -> String {
        try XMLEntities.refusing(bytes[range])
    }

    /// Whether the bytes at `range` need no decoding: ASCII, without references.
    private func isPlain(_ range: Range<Int>) -> Bool {
        bytes[range].allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "&") }
    }

    // MARK: Scanning

    /// Where `byte` is next written, from `start` on.
    private func position(of byte: UInt8, from start: Int) -> Int? {
        position(of: byte, in: start..<bytes.count)
    }

    /// Where `byte` is first written within `range`.
    private func position(of byte: UInt8, in range: Range<Int>) -> Int? {
        guard !range.isEmpty, let found = memchr(bytes.baseAddress! + range.lowerBound, Int32(byte), range.count) else { return nil }
        return range.lowerBound + (UnsafeRawPointer(found) - UnsafeRawPointer(bytes.baseAddress! + range.lowerBound))
    }

    /// Whether the bytes at `a` and at `b` are the same.
    private func same(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        ByteOrder.equal(bytes.raw(a), bytes.raw(b))
    }

    /// Whether the bytes at `range` are `literal`.
    private func same(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { ByteOrder.equal(bytes.raw(range), UnsafeRawBufferPointer($0)) }
    }

    private func starts(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        return index + count <= bytes.count && same(index..<(index + count), literal)
    }

    private mutating func skip(past literal: StaticString) throws(XMLRefusal) {
        let first = literal.withUTF8Buffer { $0[0] }
        while let found = position(of: first, from: index) {
            index = found
            if starts(literal) {
                index += literal.utf8CodeUnitCount
                return
            }
            index += 1
        }
        index = bytes.count
        throw XMLRefusal("the document ends before “\(literal)”")
    }

    private mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0a || bytes[index] == 0x0d { index += 1 }
    }

    /// Where the name at the reading position is written (checked as UTF-8).
    private mutating func readName() throws(XMLRefusal) -> Range<Int> {
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: "=")
            {
                break
            }
            ascii = ascii && byte < 0x80
            index += 1
        }
        guard index > start, index - start <= 256, ascii || String(validUTF8: bytes.raw(start..<index)) != nil else {
            throw XMLRefusal("a missing or malformed name")
        }
        return start..<index
    }

    /// The name written at `range` (read by ``readName()``, so UTF-8).
    private func text(of range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }
}

/// A namespace in scope: its URI, and its number in ``NamespaceTable`` (nil beyond the table's).
private struct DeclaredNamespace {
    var number: Int?
    var name: String
}

/// The namespaces a reply declared, the first few each once, by number (see ``BoundedXMLReader``;
/// number 0 is no namespace). A reply that declares more distinct ones is read all the same: those
/// have no number and live only in the declarations in scope.
private struct NamespaceTable {
    static var capacity: Int { 32 }

    private var names: [String] = [""]
    /// Where each was first declared, as written (nil: written with references).
    private var written: [Range<Int>?] = [nil]

    /// The namespace declared with the value at `value`.
    mutating func declared(_ value: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) throws(XMLRefusal) -> DeclaredNamespace {
        let raw = bytes.raw(value)
        for (number, range) in written.enumerated() {
            if let range, ByteOrder.equal(raw, bytes.raw(range)) {
                return DeclaredNamespace(number: number, name: names[number])
            }
        }
        let name = try XMLEntities.refusing(bytes[value])
        if let number = names.firstIndex(of: name) { return DeclaredNamespace(number: number, name: name) }
        guard names.count < Self.capacity else { return DeclaredNamespace(number: nil, name: name) }
        names.append(name)
        written.append(raw.contains(UInt8(ascii: "&")) ? nil : value)
        return DeclaredNamespace(number: names.count - 1, name: name)
    }
}

/// The names a reply's elements resolved to, by namespace number and local name: a direct-mapped
/// table of a few slots (a listing uses a dozen names), so most elements find theirs without a new
/// string.
private struct ResolvedNames {
    private static var slots: Int { 64 }
    private var table: [(namespace: Int, local: Range<Int>, name: XMLName)?] = Array(repeating: nil, count: slots)

    /// The name `local` has in the namespace numbered `namespace` (whose URI is `uri`).
    mutating func name(_ namespace: Int, _ uri: String, _ local: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> XMLName {
        let written = bytes.raw(local)
        var hash = UInt32(truncatingIfNeeded: namespace) &* 16_777_619
        for byte in written { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let slot = Int(hash >> 26)
        if let entry = table[slot], entry.namespace == namespace, ByteOrder.equal(written, bytes.raw(entry.local)) {
            return entry.name
        }
        let name = XMLName(namespace: uri, local: String(decoding: written, as: UTF8.self))
        table[slot] = (namespace, local, name)
        return name
    }
}

extension XMLEntities {
    /// `raw` decoded (``decode(_:)``), or refused as a reply's XML.
    fileprivate static func refusing(_ raw: Slice<UnsafeBufferPointer<UInt8>>) throws(XMLRefusal) -> String {
        do {
            return try decode(ArraySlice(raw))
        } catch {
            throw XMLRefusal(error.reason)
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The bytes at `range`, for comparing and checking as a block.
    fileprivate func raw(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: self[range]))
    }
}
