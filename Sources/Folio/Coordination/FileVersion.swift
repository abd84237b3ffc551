public import Foundation

/// A version of a file (Apple's `NSFileVersion`), as presenters hear of versions gained, lost and
/// resolved. The version store that creates and lists versions arrives with `Document`.
open class FileVersion: @unchecked Sendable {
    /// Where the version's contents are.
    public let url: URL
    /// The version's identity in the version store.
    public let persistentIdentifier: String
    /// When the version's contents were last modified.
    public let modificationDate: Date?

    init(url: URL, persistentIdentifier: String, modificationDate: Date?) {
        self.url = url
        self.persistentIdentifier = persistentIdentifier
        self.modificationDate = modificationDate
    }
}
