import Foundation

/// Entry points for the fuzz targets in `Fuzz/` (not API).
@_spi(Fuzzing)
public enum WebDAVFuzzing {
    /// Parses `bytes` as a PROPFIND reply and decodes every href against a base: refused or read,
    /// never a trap, and no decoded path escapes the base. The same bytes as an error reply's body
    /// give the server's words: plain, short, without markup or control characters; as a
    /// PROPPATCH reply, its statuses are three-digit codes. Each listed date is read or refused. The
    /// reply's digest (``ListingDigest``) is taken without a trap, and is the same taken twice.
    public static func exerciseMultistatus(_ bytes: [UInt8]) {
        precondition(ListingDigest.of(bytes) == ListingDigest.of(bytes), "a listing's digest that changes")
        precondition(WebDAVProvider.propstatStatuses(bytes).allSatisfy { (0...999).contains($0) }, "a status that is not three digits")
        if let words = HTTPStatusError.words(bytes) {
            precondition(words.count <= 201, "the server's words are too long")
            precondition(!words.contains("<") && !words.contains(">"), "markup left in the server's words")
            precondition(!words.unicodeScalars.contains { $0.properties.generalCategory == .control }, "a control character in the server's words")
        }
        guard let resources = try? MultistatusParser.parse(bytes) else { return }
        for resource in resources {
            if let text = resource.lastModified, let date = HTTPDate.parse(text) {
                precondition(abs(date.timeIntervalSince1970) < 10_000 * 366 * 86_400, "a date beyond the four-digit years")
            }
            guard let relative = DAVPath.relative(resource.href, basePath: "/dav/", origin: "http://127.0.0.1:1") else { continue }
            let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
            precondition(relative.isEmpty || segments.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }, "a decoded path escapes the base")
        }
    }
}
