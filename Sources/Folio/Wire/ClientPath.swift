package import FolioSystem

/// A path as a client sent it (absolute, normalized as text by its request's checks). The daemon
/// reaches what it names only by opening it once — ``resolve(allowMissing:)``, or the access
/// service, which does that and checks the app may reach what opened — and then acts on that
/// ``ResolvedItem``. The text itself is internal to this module: a handler in the daemon (another
/// module) cannot hand it to a file system call by mistake. It can show it in a message
/// (``description``), and give it where paths are compared as text and never opened
/// (``comparedAsText``): the coordination table, and the path the user's own tools named, which
/// reach everything the user can.
package struct ClientPath: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The text as sent.
    let text: String

    package init(_ text: String) { self.text = text }

    package init(from decoder: any Decoder) throws {
        text = try decoder.singleValueContainer().decode(String.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// The path, for messages and logs.
    package var description: String { text }

    /// Opens what the path names, once (``ResolvedItem/resolve(_:allowMissing:)``).
    package func resolve(allowMissing: Bool = false) throws(ResolvedItem.Failure) -> ResolvedItem {
        try ResolvedItem.resolve(text, allowMissing: allowMissing)
    }

    /// The path as sent, only where it is compared as text and never opened: the coordination
    /// table (a `moved` notice's source, held by the sender's claim; the user's own tools' paths)
    /// and the index's rows. Its uses in the daemon are listed by `ClientPathUseTests`.
    package var comparedAsText: String { text }
}

extension Array where Element == ClientPath {
    /// Paths sent as text.
    package init(_ texts: [String]) { self = texts.map(ClientPath.init) }
}
