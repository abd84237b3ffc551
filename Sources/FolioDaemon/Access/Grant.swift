import Folio
import Foundation

/// One app's access to one item: the picker's choice, an open in place, or a bookmark made of such
/// a grant. Keyed on the item's identity (so it follows renames made outside Folio); the path is
/// where the item was last seen, kept current for display.
struct Grant: Sendable, Equatable {
    /// Where a grant came from.
    enum Source: String, Sendable {
        case picker, open, user
    }

    var id: Int64
    var app: String
    var reference: ItemReference
    /// The provider domain the item lives in (`local` for the machine's own file systems).
    var provider: String
    var allowsWriting: Bool
    /// Persistent grants survive the app's exit and the daemon's restart; session grants end with
    /// the app's connection.
    var isPersistent: Bool
    /// A folder grant reaches everything inside the folder, including items added later.
    var isFolder: Bool
    var source: Source
    var created: Date
    /// For a session grant: the arbiter number of the connection it belongs to.
    var session: UInt32?

    var path: String { reference.path }

    /// The grant as `grant.list` reports it.
    func wireValue(home: String) -> WireValue {
        var display = path
        if !home.isEmpty, home != "/", CoordinationPath.isAncestor(home, of: path) { display = "~" + path.dropFirst(home.count) }
        return [
            "grant": .int(id), "app": .string(app), "path": .string(path), "displayPath": .string(display),
            "identity": .string(reference.identity), "provider": .string(provider),
            "access": .string(allowsWriting ? "read-write" : "read"), "lifetime": .string(isPersistent ? "persistent" : "session"),
            "folder": .bool(isFolder), "source": .string(source.rawValue), "created": .double(created.timeIntervalSince1970),
        ]
    }
}
