import Foundation

/// One stored version of a document, as the version store's manifest keeps it.
package struct VersionRecord: Codable, Sendable, Equatable {
    /// Why the version exists.
    package enum Kind: String, Codable, Sendable {
        /// A local version added by the app or the user.
        case manual
        /// The content a save replaced.
        case saved
        /// A save that lost to another writer's: both are kept.
        case conflict
        /// Content a document knew that another writer replaced (with or without coordination): kept
        /// so that no writer can destroy the only copy of a saved document.
        case external
    }

    /// The persistent identifier.
    package var id: String
    /// The SHA-256 of the contents, hex: the object's name.
    package var object: String
    package var size: Int64
    /// When the contents were last modified.
    package var modificationDate: Double
    /// When the version was stored.
    package var addedAt: Double
    /// The host that made the contents.
    package var savingComputer: String
    /// The document's file name when the version was stored.
    package var name: String
    package var kind: Kind
    package var isConflict: Bool
    package var isResolved: Bool
}

/// A document's entry in the version store: its identity, where it was last seen, its versions;
/// and the device, inode and path the identity was last seen on (what a copy of the document
/// cannot carry: ``VersionStore/identity(ofItemAt:creating:)``). Manifests of earlier versions of
/// Folio have none until their next version is added.
struct VersionManifest: Codable {
    var format = 1
    var identifier: String
    var lastKnownPath: String
    var versions: [VersionRecord]
    var device: UInt64?
    var inode: UInt64?
    var recordedPath: String?

    init(identifier: String, lastKnownPath: String, versions: [VersionRecord]) {
        self.identifier = identifier
        self.lastKnownPath = lastKnownPath
        self.versions = versions
    }

    /// Where the identity was recorded, when it was.
    var reference: ItemReference? {
        guard let device, let inode else { return nil }
        return ItemReference(path: recordedPath ?? lastKnownPath, identity: identifier, device: device, inode: inode)
    }
}
