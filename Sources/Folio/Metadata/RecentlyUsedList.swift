package import Foundation

/// GTK's list of recently used files (`$XDG_DATA_HOME/recently-used.xbel`, the freedesktop desktop
/// bookmark format), read so that what GTK apps opened shows among Folio's recents.
///
/// The reader is deliberately small and strict about what it accepts: it scans the XML for
/// `<bookmark href=… added=… modified=… visited=…>` elements and their
/// `<bookmark:application name=…>` children, decodes entities, and takes only `file://` URLs with
/// absolute paths. Anything malformed (an unterminated tag or attribute value, a bad entity, a
/// file too large, too many entries) refuses the whole file with a reason, so a half-read list
/// never replaces a good one.
package struct RecentlyUsedList: Sendable, Equatable {
    /// One recently used file.
    package struct Entry: Sendable, Equatable {
        /// The file's path.
        package var path: String
        /// When it was last used: the latest of added, modified and visited.
        package var date: Date
        /// The application that used it last, when named.
        package var application: String?
    }

    /// Why a list was refused.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var reason: String
        package var offset: Int
        package var description: String { "recently-used.xbel: \(reason) at byte \(offset)" }
    }

    /// The entries, newest first.
    package var entries: [Entry]

    /// The largest file read.
    package static let maximumBytes = 16 << 20
    /// The most entries kept.
    package static let maximumEntries = 20_000

    /// Reads a list.
    package init(bytes: [UInt8]) throws(Failure) {
        guard bytes.count <= Self.maximumBytes else { throw Failure(reason: "larger than \(Self.maximumBytes) bytes", offset: 0) }
        var scanner = Scanner(bytes: bytes)
        var entries: [Entry] = []
        var current: Entry?
        while let tag = try scanner.nextTag() {
            switch tag.name {
            case "bookmark" where !tag.isClosing:
                if let open = current { entries.append(open) }
                current = nil
                guard let href = tag.attributes["href"] else { continue }
                guard let path = Self.path(fromFileURL: href) else { continue }
                let dates = ["added", "modified", "visited"].compactMap { tag.attributes[$0].flatMap(Self.date) }
                guard let date = dates.max() else { continue }
                current = Entry(path: path, date: date, application: nil)
                if tag.isSelfClosing, let done = current {
                    entries.append(done)
                    current = nil
                }
            case "bookmark" where tag.isClosing:
                if let done = current { entries.append(done) }
                current = nil
            case "bookmark:application" where !tag.isClosing:
                guard var open = current, let name = tag.attributes["name"] else { continue }
                let used = tag.attributes["modified"].flatMap(Self.date)
                if open.application == nil || used.map({ $0 >= open.date }) == true { open.application = name }
                if let used, used > open.date { open.date = used }
                current = open
            default:
                continue
            }
            guard entries.count <= Self.maximumEntries else {
                throw Failure(reason: "more than \(Self.maximumEntries) entries", offset: scanner.offset)
            }
        }
        if let open = current { entries.append(open) }
        self.entries = entries.sorted { $0.date > $1.date }
    }

    /// The path of a `file://` URL (percent-decoded, absolute, without NUL); nil for other URLs.
    static func path(fromFileURL text: String) -> String? {
        guard text.hasPrefix("file://") else { return nil }
        var rest = Substring(text.dropFirst("file://".count))
        if !rest.hasPrefix("/") {
            // file://host/path: only the local host.
            guard let slash = rest.firstIndex(of: "/"), rest[..<slash] == "localhost" else { return nil }
            rest = rest[slash...]
        }
        guard let decoded = String(rest).removingPercentEncoding, decoded.hasPrefix("/"), !decoded.utf8.contains(0),
            decoded.utf8.count <= 4096
        else { return nil }
        return decoded
    }

    /// An ISO 8601 date as GLib writes it (`2024-01-31T10:00:00.123456Z`, fraction optional).
    static func date(_ text: String) -> Date? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 20, utf8.count <= 40, utf8.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = utf8[index]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-"), utf8[10] == UInt8(ascii: "T"), utf8[13] == UInt8(ascii: ":"),
            utf8[16] == UInt8(ascii: ":"), let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if utf8.count > 20 {
            guard utf8[19] == UInt8(ascii: "."), utf8.count > 21, let digits = number(20..<(utf8.count - 1)) else { return nil }
            fraction = Double(digits) / pow(10, Double(utf8.count - 21))
        } else if utf8[19] != UInt8(ascii: "Z") {
            return nil
        }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        guard let date = components.date else { return nil }
        return date.addingTimeInterval(fraction)
    }

    /// Finds tags in XML text: names and attributes, skipping text, comments, declarations and
    /// processing instructions.
    struct Scanner {
        struct Tag {
            var name: String
            var attributes: [String: String]
            var isClosing: Bool
            var isSelfClosing: Bool
        }

        let bytes: [UInt8]
        var offset = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        mutating func nextTag() throws(Failure) -> Tag? {
            while offset < bytes.count {
                guard bytes[offset] == UInt8(ascii: "<") else {
                    offset += 1
                    continue
                }
                if starts(with: "<!--") {
                    try skip(past: "-->")
                    continue
                }
                if starts(with: "<?") {
                    try skip(past: "?>")
                    continue
                }
                if starts(with: "<![CDATA[") {
                    try skip(past: "]]>")
                    continue
                }
                if starts(with: "<!") {
                    try skip(past: ">")
                    continue
                }
                return try tag()
            }
            return nil
        }

        private func starts(with text: String) -> Bool {
            let pattern = Array(text.utf8)
            return offset + pattern.count <= bytes.count && Array(bytes[offset..<(offset + pattern.count)]) == pattern
        }

        private mutating func skip(past text: String) throws(Failure) {
            let pattern = Array(text.utf8)
            let start = offset
            while offset + pattern.count <= bytes.count {
                if Array(bytes[offset..<(offset + pattern.count)]) == pattern {
                    offset += pattern.count
                    return
                }
                offset += 1
            }
            throw Failure(reason: "unterminated markup (expected \(text))", offset: start)
        }

        private static func isNameByte(_ byte: UInt8) -> Bool {
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x3A
                || byte == 0x2D || byte == 0x5F || byte == 0x2E || byte >= 0x80
        }

        private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

        private mutating func name() throws(Failure) -> String {
            let start = offset
            while offset < bytes.count, Self.isNameByte(bytes[offset]) { offset += 1 }
            guard offset > start, offset - start <= 256, let name = String(validating: bytes[start..<offset], as: UTF8.self) else {
                throw Failure(reason: "expected a name", offset: start)
            }
            return name
        }

        private mutating func skipSpace() {
            while offset < bytes.count, Self.isSpace(bytes[offset]) { offset += 1 }
        }

        private mutating func tag() throws(Failure) -> Tag {
            let start = offset
            offset += 1
            let closing = offset < bytes.count && bytes[offset] == UInt8(ascii: "/")
            if closing { offset += 1 }
            let name = try self.name()
            var attributes: [String: String] = [:]
            while true {
                skipSpace()
                guard offset < bytes.count else { throw Failure(reason: "unterminated tag <\(name)", offset: start) }
                if bytes[offset] == UInt8(ascii: ">") {
                    offset += 1
                    return Tag(name: name, attributes: attributes, isClosing: closing, isSelfClosing: false)
                }
                if bytes[offset] == UInt8(ascii: "/") {
                    guard offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: ">") else {
                        throw Failure(reason: "expected /> in <\(name)", offset: offset)
                    }
                    offset += 2
                    return Tag(name: name, attributes: attributes, isClosing: closing, isSelfClosing: true)
                }
                guard !closing else { throw Failure(reason: "attributes in a closing tag </\(name)", offset: offset) }
                let attribute = try self.name()
                skipSpace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "=") else {
                    throw Failure(reason: "expected = after \(attribute)", offset: offset)
                }
                offset += 1
                skipSpace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") || bytes[offset] == UInt8(ascii: "'") else {
                    throw Failure(reason: "expected a quoted value for \(attribute)", offset: offset)
                }
                let quote = bytes[offset]
                offset += 1
                let valueStart = offset
                while offset < bytes.count, bytes[offset] != quote {
                    guard bytes[offset] != UInt8(ascii: "<") else { throw Failure(reason: "< in the value of \(attribute)", offset: offset) }
                    offset += 1
                }
                guard offset < bytes.count else { throw Failure(reason: "unterminated value of \(attribute)", offset: valueStart) }
                guard offset - valueStart <= 65_536 else { throw Failure(reason: "the value of \(attribute) is too long", offset: valueStart) }
                attributes[attribute] = try Self.decodeEntities(bytes[valueStart..<offset], at: valueStart)
                offset += 1
            }
        }

        /// The text with its entities decoded (``XMLEntities``), failures placed at `start`.
        static func decodeEntities(_ raw: ArraySlice<UInt8>, at start: Int) throws(Failure) -> String {
            do {
                return try XMLEntities.decode(raw)
            } catch {
                throw Failure(reason: error.reason, offset: start + error.offset)
            }
        }
    }
}
