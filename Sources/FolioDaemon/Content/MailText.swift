import Foundation

/// The text of an email (`.eml`, RFC 5322 with MIME): the subject, sender and recipients, then
/// the text parts (HTML ones when a message has no plain text), their transfer encodings and
/// encoded words decoded; attachments left out.
enum MailText {
    static func text(of bytes: [UInt8], limit: Int) -> String {
        var output = ""
        append(part: bytes[...], depth: 0, into: &output, limit: limit, headersShown: true)
        return MarkupText.cut(Array(output.utf8), limit: limit)
    }

    /// A part's headers (unfolded, by lower-cased name) and where its body starts.
    private static func split(_ part: ArraySlice<UInt8>) -> (headers: [(String, String)], body: ArraySlice<UInt8>) {
        var headers: [(String, String)] = []
        var index = part.startIndex
        var lines: [String] = []
        while index < part.endIndex {
            let end = part[index...].firstIndex(of: UInt8(ascii: "\n")) ?? part.endIndex
            var line = part[index..<end]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            index = end == part.endIndex ? end : end + 1
            if line.isEmpty { break }
            let text = String(decoding: line, as: UTF8.self)
            if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t"), !lines.isEmpty {
                lines[lines.count - 1] += " " + text.trimmingCharacters(in: .whitespaces)
            } else if lines.count < 200 {
                lines.append(text)
            }
        }
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return (headers, part[index...])
    }

    private static func append(part: ArraySlice<UInt8>, depth: Int, into output: inout String, limit: Int, headersShown: Bool) {
        guard depth < 8, output.utf8.count < limit else { return }
        let (headers, body) = split(part)
        func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }
        if headersShown {
            for name in ["subject", "from", "to", "cc"] {
                if let value = header(name) { output += decodeWords(value) + "\n" }
            }
        }
        let contentType = header("content-type") ?? "text/plain"
        let lowered = contentType.lowercased()
        if lowered.hasPrefix("multipart/") {
            guard let boundary = parameter("boundary", of: contentType) else { return }
            var parts = Array(split(body, boundary: Array(("--" + boundary).utf8)).prefix(100))
            if lowered.hasPrefix("multipart/alternative") {
                // One of the alternatives: the plain text when there is one.
                func type(_ part: ArraySlice<UInt8>) -> String { (split(part).headers.first { $0.0 == "content-type" }?.1 ?? "text/plain").lowercased() }
                if let plain = parts.first(where: { type($0).hasPrefix("text/plain") }) ?? parts.first { parts = [plain] }
            }
            for candidate in parts {
                append(part: candidate, depth: depth + 1, into: &output, limit: limit, headersShown: false)
            }
            return
        }
        if lowered.hasPrefix("message/rfc822") {
            append(part: body, depth: depth + 1, into: &output, limit: limit, headersShown: true)
            return
        }
        guard lowered.hasPrefix("text/"), !(header("content-disposition")?.lowercased().hasPrefix("attachment") ?? false) else { return }
        let decoded = decode(body, encoding: header("content-transfer-encoding")?.lowercased() ?? "7bit")
        let text = lowered.hasPrefix("text/html") ? MarkupText.html.text(of: decoded, limit: limit) : String(decoding: decoded, as: UTF8.self)
        output += text + "\n"
    }

    private static func parameter(_ name: String, of header: String) -> String? {
        for piece in header.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == name else { continue }
            return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    private static func split(_ body: ArraySlice<UInt8>, boundary: [UInt8]) -> [ArraySlice<UInt8>] {
        var parts: [ArraySlice<UInt8>] = []
        var start: Int?
        var index = body.startIndex
        while index < body.endIndex {
            let end = body[index...].firstIndex(of: UInt8(ascii: "\n")) ?? body.endIndex
            let line = body[index..<end]
            if line.starts(with: boundary) {
                if let start { parts.append(body[start..<index]) }
                if line.dropFirst(boundary.count).starts(with: "--".utf8) { return parts }
                start = end == body.endIndex ? end : end + 1
            }
            index = end == body.endIndex ? end : end + 1
        }
        if let start { parts.append(body[start...]) }
        return parts
    }

    private static func decode(_ body: ArraySlice<UInt8>, encoding: String) -> [UInt8] {
        switch encoding {
        case "base64":
            let compact = body.filter { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: " ") }
            return Data(base64Encoded: Data(compact), options: .ignoreUnknownCharacters).map { Array($0) } ?? []
        case "quoted-printable": return quotedPrintable(body, underscoreIsSpace: false)
        default: return Array(body)
        }
    }

    private static func quotedPrintable(_ body: some Collection<UInt8>, underscoreIsSpace: Bool) -> [UInt8] {
        let bytes = Array(body)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "="), index + 1 < bytes.count {
                if bytes[index + 1] == UInt8(ascii: "\n") {
                    index += 2
                    continue
                }
                if bytes[index + 1] == UInt8(ascii: "\r"), index + 2 < bytes.count, bytes[index + 2] == UInt8(ascii: "\n") {
                    index += 3
                    continue
                }
                if index + 2 < bytes.count, let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) {
                    output.append(value)
                    index += 3
                    continue
                }
            }
            output.append(underscoreIsSpace && byte == UInt8(ascii: "_") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return output
    }

    /// RFC 2047's encoded words (`=?UTF-8?B?…?=`, `=?utf-8?Q?…?=`) decoded, as UTF-8.
    static func decodeWords(_ value: String) -> String {
        var result = ""
        var rest = Substring(value)
        while let start = rest.range(of: "=?") {
            result += rest[..<start.lowerBound]
            let after = rest[start.upperBound...]
            let pieces = after.split(separator: "?", maxSplits: 3, omittingEmptySubsequences: false)
            guard pieces.count == 4, pieces[3].hasPrefix("="), pieces[1].count == 1 else {
                result += "=?"
                rest = after
                continue
            }
            let encoded = pieces[2]
            let bytes =
                pieces[1].uppercased() == "B"
                ? (Data(base64Encoded: String(encoded), options: .ignoreUnknownCharacters).map { Array($0) } ?? [])
                : quotedPrintable(Array(encoded.utf8), underscoreIsSpace: true)
            result += String(decoding: bytes, as: UTF8.self)
            rest = pieces[3].dropFirst()
            // White space between two encoded words is not text.
            if rest.hasPrefix(" =?") { rest = rest.dropFirst() }
        }
        return result + rest
    }
}
