import Folio

/// What an HTTP status that is not success means for a provider, shared by the WebDAV and S3
/// clients: each status maps to the `FileProviderError` whose reaction fits it, with the server's
/// own words. `serverUnreachable` is kept for a server that could not be reached (a gateway's 502
/// or 504 says the server behind it could not be); a server that answered is reachable.
enum HTTPStatusError {
    /// The error for `status`, answered to `method` on `target` (a path, a key) whose last
    /// component is an item's name; `isRoot` when `target` is the provider's root (a 403 there
    /// is the account's, not one item's); `words` what the server said, if anything.
    static func error(_ status: Int, method: String, target: String, isRoot: Bool, words: String?) -> FileProviderError {
        let what = "\(method) \(target): HTTP \(status)" + (words.map { " (\($0))" } ?? "")
        let name = target.split(separator: "/").last.map(String.init) ?? target
        let namesAnItem = ["PUT", "MKCOL", "MOVE", "COPY"].contains(method)
        switch status {
        case 401: return FileProviderError(.notAuthenticated, message: "the server refused the user name or password: \(what)")
        case 403 where isRoot: return FileProviderError(.notAuthenticated, message: "the server does not let this account in: \(what)")
        case 403: return FileProviderError(.cannotSynchronize, message: "the server forbids it: \(what)")
        case 404, 410: return FileProviderError(.noSuchItem, message: what)
        case 409: return FileProviderError(.noSuchItem, message: "its folder is missing on the server: \(what)")
        case 412: return FileProviderError(.localVersionConflictingWithServer, message: what)
        case 400 where namesAnItem, 414 where namesAnItem:
            return FileProviderError(.excludedFromSync, message: "the server refuses the name “\(name)”: \(what)")
        case 400: return FileProviderError(.cannotSynchronize, message: "the server refused the request: \(what)")
        case 405 where method == "PROPFIND":
            return FileProviderError(.cannotSynchronize, message: "this server does not speak WebDAV (no PROPFIND): \(what)")
        case 405, 501: return FileProviderError(.cannotSynchronize, message: "the server does not allow \(method) here: \(what)")
        case 413: return FileProviderError(.cannotSynchronize, message: "the server refuses a file this large: \(what)")
        case 415: return FileProviderError(.cannotSynchronize, message: "the server refuses this kind of content: \(what)")
        case 423: return FileProviderError(.providerDomainTemporarilyUnavailable, message: "the item is locked on the server: \(what)")
        case 429, 503: return FileProviderError(.providerDomainTemporarilyUnavailable, message: "the server is busy: \(what)")
        case 507: return FileProviderError(.insufficientQuota, message: "the server is out of space: \(what)")
        case 502, 504: return FileProviderError(.serverUnreachable, message: "a gateway could not reach the server: \(what)")
        case 500..<600: return FileProviderError(.providerDomainTemporarilyUnavailable, message: "the server failed: \(what)")
        case 300..<400: return FileProviderError(.cannotSynchronize, message: "the server sends it elsewhere, which Folio does not follow: \(what)")
        default: return FileProviderError(.cannotSynchronize, message: what)
        }
    }

    /// The first words of an error reply's body, as plain text: markup removed, spaces collapsed,
    /// at most 200 characters; nil when there are none.
    static func words(_ body: [UInt8]) -> String? {
        let text = String(decoding: body.prefix(8 << 10), as: UTF8.self)
        var plain = ""
        var inTag = false
        for character in text {
            if character == "<" { inTag = true; plain.append(" "); continue }
            if character == ">" { inTag = false; continue }
            if !inTag { plain.append(character.isNewline || character == "\t" ? " " : character) }
        }
        let collapsed = plain.split(whereSeparator: { $0 == " " }).joined(separator: " ")
            .filter { !$0.unicodeScalars.contains { $0.properties.generalCategory == .control } }
        guard !collapsed.isEmpty else { return nil }
        return collapsed.count > 200 ? String(collapsed.prefix(200)) + "…" : collapsed
    }
}
