package import Foundation

extension RecentlyUsedList {
    /// An application's use of a file, as GTK's list records it.
    package struct Use: Sendable {
        /// The file's path (absolute).
        package var path: String
        /// Its MIME type.
        package var mimeType: String
        /// The application's name (`bookmark:application name`).
        package var application: String
        /// The command that opens it again (`exec`, `%u` for the file).
        package var exec: String
        /// When.
        package var date: Date

        package init(path: String, mimeType: String, application: String, exec: String, date: Date) {
            (self.path, self.mimeType, self.application, self.exec, self.date) = (path, mimeType, application, exec, date)
        }
    }

    /// `existing` (a list's bytes; empty for none) with `use` recorded the way GTK records one:
    /// the file's bookmark, if it has one, gets the new `modified` and `visited` dates and the
    /// application's entry (its count raised, or added); otherwise a bookmark is added at the end.
    /// Everything else in the file stays as it was, byte for byte.
    ///
    /// - Throws: `Failure` when `existing` is not a list this reader accepts (a list that cannot
    ///   be read is never rewritten).
    package static func recording(_ use: Use, in existing: [UInt8]) throws(Failure) -> [UInt8] {
        let written = try editing(use, in: existing)
        // What is written must read back with the use in it (a crafted list could fool the edit:
        // it is then left alone rather than broken).
        let reread = try RecentlyUsedList(bytes: written)
        // As dated in the list: to the microsecond.
        let dated = Self.date(Self.stamp(use.date)) ?? use.date
        guard reread.entries.contains(where: { $0.path == use.path && $0.date >= dated }) else {
            throw Failure(reason: "the use could not be recorded in this list", offset: 0)
        }
        return written
    }

    private static func editing(_ use: Use, in existing: [UInt8]) throws(Failure) -> [UInt8] {
        let stamp = Self.stamp(use.date)
        let href = XMLEntities.encode(URL(fileURLWithPath: use.path).absoluteString)
        let application = "<bookmark:application name=\"\(XMLEntities.encode(use.application))\" exec=\"\(XMLEntities.encode(use.exec))\" modified=\"\(stamp)\" count=\"1\"/>"
        let bookmark = """
              <bookmark href="\(href)" added="\(stamp)" modified="\(stamp)" visited="\(stamp)">
                <info>
                  <metadata owner="http://freedesktop.org">
                    <mime:mime-type type="\(XMLEntities.encode(use.mimeType))"/>
                    <bookmark:applications>
                      \(application)
                    </bookmark:applications>
                  </metadata>
                </info>
              </bookmark>

            """
        guard !existing.isEmpty else {
            return Array("""
                <?xml version="1.0" encoding="UTF-8"?>
                <xbel version="1.0"
                      xmlns:bookmark="http://www.freedesktop.org/standards/desktop-bookmarks"
                      xmlns:mime="http://www.freedesktop.org/standards/shared-mime-info"
                >
                \(bookmark)</xbel>

                """.utf8)
        }
        _ = try RecentlyUsedList(bytes: existing)
        guard var text = String(validating: existing, as: UTF8.self) else { throw Failure(reason: "text that is not UTF-8", offset: 0) }
        guard let start = text.range(of: "<bookmark href=\"\(href)\""), let tagEnd = text[start.upperBound...].firstIndex(of: ">"),
            let end = text[tagEnd...].range(of: "</bookmark>")
        else {
            guard let close = text.range(of: "</xbel>", options: .backwards) else { throw Failure(reason: "no </xbel>", offset: existing.count) }
            text.insert(contentsOf: bookmark, at: close.lowerBound)
            return Array(text.utf8)
        }
        // The bookmark's body first (the opening tag's length changes below).
        var body = String(text[text.index(after: tagEnd)..<end.lowerBound])
        let name = "<bookmark:application name=\"\(XMLEntities.encode(use.application))\""
        if let own = body.range(of: name), let ownEnd = body[own.upperBound...].range(of: "/>") {
            var element = String(body[own.lowerBound..<ownEnd.upperBound])
            let count = Self.attribute("count", in: element).flatMap(Int.init) ?? 0
            element = Self.setting("count", to: "\(count + 1)", in: element)
            element = Self.setting("modified", to: stamp, in: element)
            body.replaceSubrange(own.lowerBound..<ownEnd.upperBound, with: element)
        } else if let applications = body.range(of: "</bookmark:applications>") {
            body.insert(contentsOf: "  " + application + "\n        ", at: applications.lowerBound)
        }
        var tag = String(text[start.lowerBound...tagEnd])
        tag = Self.setting("modified", to: stamp, in: tag)
        tag = Self.setting("visited", to: stamp, in: tag)
        text.replaceSubrange(start.lowerBound..<end.lowerBound, with: tag + body)
        return Array(text.utf8)
    }

    /// A date as GLib writes it: UTC, microseconds.
    static func stamp(_ date: Date) -> String {
        let seconds = floor(date.timeIntervalSince1970)
        let micros = Int(((date.timeIntervalSince1970 - seconds) * 1_000_000).rounded(.down))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let whole = formatter.string(from: Date(timeIntervalSince1970: seconds))
        return String(whole.dropLast()) + String(format: ".%06dZ", micros)
    }

    /// The value of `name="…"` in a tag's text.
    private static func attribute(_ name: String, in tag: String) -> String? {
        guard let start = tag.range(of: " \(name)=\""), let end = tag[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(tag[start.upperBound..<end])
    }

    /// The tag with `name`'s value set (added before its end when it has none).
    private static func setting(_ name: String, to value: String, in tag: String) -> String {
        var tag = tag
        if let start = tag.range(of: " \(name)=\""), let end = tag[start.upperBound...].firstIndex(of: "\"") {
            tag.replaceSubrange(start.upperBound..<end, with: value)
        } else if let close = tag.range(of: "/>", options: .backwards) ?? tag.range(of: ">", options: .backwards) {
            tag.insert(contentsOf: " \(name)=\"\(value)\"", at: close.lowerBound)
        }
        return tag
    }
}
