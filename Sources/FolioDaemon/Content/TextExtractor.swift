import Folio
import FolioSystem
import Foundation
import SystemPackage
package import UniformTypes

/// A document's text for the content index: plain text and source code as they are, HTML and
/// XML without their markup, PDF through poppler's `pdftotext`, OpenDocument and Office Open XML
/// from the XML inside their zip (`unzip`), EPUB from its XHTML, email from its text parts. Runs
/// inside the extraction worker (``TextExtractionWorker``), a sandboxed process with time and
/// memory limits: the files are untrusted.
package enum TextExtractor {
    /// The formats read, by what their types conform to.
    package enum Format: String, Sendable {
        case plain, markup, html, pdf, openDocument, wordDocument, presentation, spreadsheet, epub, mail
    }

    /// How much text is kept of one document, and how much of a container's XML is read.
    static let textLimit = 1 << 20
    static let inflatedLimit = 64 << 20

    /// The format of `type`, or nil when its text is not read (images, archives, binaries).
    package static func format(of type: UTType) -> Format? {
        let mimeTypes = Set(([type] + Array(type.supertypes)).compactMap(\.preferredMIMEType))
        if mimeTypes.contains("application/pdf") { return .pdf }
        if mimeTypes.contains("application/epub+zip") { return .epub }
        if mimeTypes.contains("message/rfc822") { return .mail }
        if mimeTypes.contains("application/vnd.openxmlformats-officedocument.wordprocessingml.document") { return .wordDocument }
        if mimeTypes.contains("application/vnd.openxmlformats-officedocument.presentationml.presentation") { return .presentation }
        if mimeTypes.contains("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet") { return .spreadsheet }
        if mimeTypes.contains(where: { $0.hasPrefix("application/vnd.oasis.opendocument.") }) { return .openDocument }
        if type.conforms(to: .html) { return .html }
        if type.conforms(to: .xml) { return .markup }
        if type.conforms(to: .text) { return .plain }
        return nil
    }

    enum Failure: Error, CustomStringConvertible {
        case unreadable(String)
        case toolMissing(String)
        var description: String {
            switch self {
            case .unreadable(let reason): "cannot read the file: \(reason)"
            case .toolMissing(let tool): "\(tool) is not installed"
            }
        }
    }

    /// The text of the file at `path` in `format`, at most ``textLimit`` bytes.
    static func text(ofFileAt path: String, format: Format) throws -> String {
        switch format {
        case .plain:
            let bytes = try read(path, limit: textLimit)
            return MarkupText.cut(bytes.contains(0) ? bytes.filter { $0 != 0 } : bytes, limit: textLimit)
        case .markup:
            return MarkupText(blocks: []).text(of: try read(path, limit: inflatedLimit), limit: textLimit)
        case .html:
            return MarkupText.html.text(of: try read(path, limit: inflatedLimit), limit: textLimit)
        case .mail:
            return MailText.text(of: try read(path, limit: inflatedLimit), limit: textLimit)
        case .pdf:
            let output = try tool("pdftotext", ["-q", "-enc", "UTF-8", path, "-"], limit: textLimit)
            return MarkupText.cut(output.filter { $0 != 0x0C }, limit: textLimit)
        case .openDocument:
            return try MarkupText(blocks: ["p", "h", "table-cell", "list-item"], breaks: ["line-break"], tabs: ["tab"])
                .text(ofTool: "unzip", ["-p", path, "content.xml"])
        case .wordDocument:
            return try MarkupText(blocks: ["p", "tc"], breaks: ["br", "cr"], tabs: ["tab"]).text(ofTool: "unzip", ["-p", path, "word/document.xml"])
        case .presentation:
            return try MarkupText(blocks: ["p"]).text(ofTool: "unzip", ["-p", "-C", path, "ppt/slides/slide*.xml"])
        case .spreadsheet:
            return try MarkupText(blocks: ["si"]).text(ofTool: "unzip", ["-p", path, "xl/sharedStrings.xml"])
        case .epub:
            // The book's chapters, in the order the archive holds them.
            let listing = String(decoding: try tool("unzip", ["-Z1", path], limit: 1 << 20), as: UTF8.self)
            let chapters = listing.split(separator: "\n").map(String.init).filter {
                let lower = $0.lowercased()
                return lower.hasSuffix(".xhtml") || lower.hasSuffix(".html") || lower.hasSuffix(".htm")
            }
            guard !chapters.isEmpty else { return "" }
            // `unzip` reads its names as patterns: wildcards in a name are escaped.
            let names = chapters.prefix(2000).map { $0.replacingOccurrences(of: "[", with: "[[]").replacingOccurrences(of: "*", with: "[*]").replacingOccurrences(of: "?", with: "[?]") }
            return try MarkupText.html.text(ofTool: "unzip", ["-p", path] + names)
        }
    }

    /// The first `limit` bytes of the regular file at `path` (never a FIFO or a device).
    private static func read(_ path: String, limit: Int) throws -> [UInt8] {
        do {
            return try FilePath(path).readRegularFilePrefix(limit: limit)
        } catch {
            throw Failure.unreadable(error == .invalidArgument ? "not a regular file" : "\(error)")
        }
    }

    static func tool(_ name: String, _ arguments: [String], limit: Int, enough: (([UInt8]) -> Bool)? = nil) throws -> [UInt8] {
        guard let executable = ExecutableSearch.locate(name) else { throw Failure.toolMissing(name) }
        guard let output = CappedCommand.output([executable] + arguments, limit: limit, enough: enough) else { throw Failure.unreadable("\(name) failed") }
        return output
    }
}

extension MarkupText {
    /// The text of the markup a tool writes (a container's XML from `unzip`), read up to
    /// ``TextExtractor/inflatedLimit`` and no further than it takes to fill
    /// ``TextExtractor/textLimit`` with text.
    fileprivate func text(ofTool name: String, _ arguments: [String]) throws -> String {
        text(of: try markup(ofTool: name, arguments), limit: TextExtractor.textLimit)
    }

    /// The markup a tool writes, read no further than it takes to fill
    /// ``TextExtractor/textLimit`` with text (and never past ``TextExtractor/inflatedLimit``).
    func markup(ofTool name: String, _ arguments: [String]) throws -> [UInt8] {
        let limit = TextExtractor.textLimit
        // Full text stops the parser, so the text of more bytes would be the same; a cut at a
        // character's boundary leaves up to three bytes short of the limit.
        return try TextExtractor.tool(name, arguments, limit: TextExtractor.inflatedLimit) { self.text(of: $0, limit: limit).utf8.count > limit - 4 }
    }
}

/// The worker's side of the extraction protocol (`folio extract-worker`).
package enum TextExtraction {
    /// The reply to one request: `ok <byte count>\n<text>` or `error <reason>\n`; nil for a
    /// format this build does not know.
    package static func reply(format name: String, path: String) -> [UInt8]? {
        guard let format = TextExtractor.Format(rawValue: name) else { return nil }
        do {
            let text = Array(try TextExtractor.text(ofFileAt: path, format: format).utf8)
            return Array("ok \(text.count)\n".utf8) + text
        } catch {
            return Array("error \(String(describing: error).replacingOccurrences(of: "\n", with: " "))\n".utf8)
        }
    }
}
