/// The head of an HTTP/1.1 reply (RFC 9112): its status line and header fields, read from bytes a
/// server sent, which it controls. ``PlainHTTPClient`` reads its replies through it.
struct HTTPReplyHead: Sendable, Equatable {
    /// The status code (100–999).
    var status: Int
    /// The header fields in order, names as sent.
    var fields: [(name: String, value: String)]
    /// Whether the reply came as HTTP/1.0 (whose connections close unless kept alive by name).
    var isHTTP10: Bool

    /// The longest head read: a reply whose head is longer is refused.
    static let maximumSize = 64 << 10
    /// The most header fields read.
    static let maximumFields = 200

    static func == (lhs: HTTPReplyHead, rhs: HTTPReplyHead) -> Bool {
        lhs.status == rhs.status && lhs.isHTTP10 == rhs.isHTTP10 && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The first field named `name` (compared without case).
    func field(_ name: String) -> String? {
        fields.first { $0.name.utf8.count == name.utf8.count && $0.name.lowercased() == name.lowercased() }?.value
    }

    /// How the body after this head is framed (RFC 9112 §6.3), for a reply to `method`.
    enum Framing: Equatable {
        /// No body (HEAD, 1xx, 204, 304).
        case none
        /// This many bytes.
        case length(Int64)
        /// Chunked transfer coding.
        case chunked
        /// Everything until the server closes the connection.
        case untilClose
    }

    /// The body's framing for a reply to `method`; an error for a Content-Length that is not one
    /// number (several that disagree, a sign, digits beyond 18) or a transfer coding other than chunked.
    func framing(method: String) throws(PlainHTTPError) -> Framing {
        if method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 { return .none }
        if let coding = field("Transfer-Encoding") {
            // chunked must be the last coding; any other coding is one this client cannot undo.
            guard coding.split(separator: ",").map({ $0.trimmingASCIISpaces().lowercased() }) == ["chunked"] else {
                throw .malformed("a transfer coding this client does not read: \(coding.prefix(60))")
            }
            return .chunked
        }
        var length: Int64?
        for (name, value) in fields where name.lowercased() == "content-length" {
            for part in value.split(separator: ",", omittingEmptySubsequences: false) {
                let digits = part.trimmingASCIISpaces()
                guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(digits) else {
                    throw .malformed("a Content-Length that is not a number: \(value.prefix(60))")
                }
                guard length == nil || length == number else { throw .malformed("Content-Lengths that disagree") }
                length = number
            }
        }
        return length.map { .length($0) } ?? .untilClose
    }

    /// Whether the connection stays open after this reply.
    var keepsAlive: Bool {
        let tokens = (field("Connection") ?? "").split(separator: ",").map { $0.trimmingASCIISpaces().lowercased() }
        if tokens.contains("close") { return false }
        return !isHTTP10 || tokens.contains("keep-alive")
    }

    /// Where the head in `bytes` ends: the index after its blank line (CRLF CRLF, or a bare LF
    /// where a CRLF belongs, as servers' parsers tolerate), or nil while it has not ended.
    static func end(in bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 1
        while index < bytes.count {
            if bytes[index] == 0x0A, bytes[index - 1] == 0x0A || (index >= 2 && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A) {
                return index + 1
            }
            index += 1
        }
        return nil
    }

    /// Reads a head: `bytes` up to and including its blank line.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(PlainHTTPError) -> HTTPReplyHead {
        guard bytes.count <= maximumSize else { throw .malformed("a reply head longer than \(maximumSize) bytes") }
        var lines: [UnsafeRawBufferPointer] = []
        var start = 0
        for index in 0..<bytes.count where bytes[index] == 0x0A {
            var end = index
            if end > start, bytes[end - 1] == 0x0D { end -= 1 }
            lines.append(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            start = index + 1
        }
        guard let statusLine = lines.first else { throw .malformed("an empty reply") }
        // "HTTP/1.x SP 3DIGIT SP reason" (the reason may be empty, its space too).
        let prefix = Array("HTTP/1.".utf8)
        guard statusLine.count >= 12, statusLine.starts(with: prefix), statusLine[7] == 0x30 || statusLine[7] == 0x31, statusLine[8] == 0x20,
            (9..<12).allSatisfy({ (0x30...0x39).contains(statusLine[$0]) }), statusLine.count == 12 || statusLine[12] == 0x20
        else { throw .malformed("not an HTTP/1.x status line: \(printable(statusLine))") }
        let status = (9..<12).reduce(0) { $0 * 10 + Int(statusLine[$1] - 0x30) }
        guard status >= 100 else { throw .malformed("a status below 100: \(status)") }
        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            // Obsolete line folding (a line starting with space or tab) is refused (RFC 9112 §5.2).
            guard line[0] != 0x20, line[0] != 0x09 else { throw .malformed("a folded header line") }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { throw .malformed("a header line without a name: \(printable(line))") }
            let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
            guard name.allSatisfy(isTokenByte) else { throw .malformed("a header name with a character no name has: \(printable(name))") }
            var value = UnsafeRawBufferPointer(rebasing: line[(colon + 1)...])
            while let first = value.first, first == 0x20 || first == 0x09 { value = UnsafeRawBufferPointer(rebasing: value.dropFirst()) }
            while let last = value.last, last == 0x20 || last == 0x09 { value = UnsafeRawBufferPointer(rebasing: value.dropLast()) }
            guard !value.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) else { throw .malformed("a header value with a control character") }
            guard fields.count < maximumFields else { throw .malformed("more than \(maximumFields) header fields") }
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return HTTPReplyHead(status: status, fields: fields, isHTTP10: statusLine[7] == 0x30)
    }

    /// Whether `byte` may stand in a header name (RFC 9110's tchar).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"),
            UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// The start of `bytes` as text for an error, without control characters.
    static func printable(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.prefix(80).map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}

extension Substring {
    /// The text without leading or trailing spaces and tabs.
    func trimmingASCIISpaces() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
