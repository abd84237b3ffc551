import Foundation

/// What identifies a local file's content without reading it: when it is unchanged, the content
/// hash known for it still holds (so `touch` or a chmod costs a stat, and a rewrite a hash).
struct LocalFingerprint: Hashable, Codable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Double
}

/// A file or folder in the local replica.
struct LocalEntry: Equatable, Sendable {
    var isFolder: Bool
    /// The content's SHA-256 (hex), for files with a base (a new file is hashed when it is sent or
    /// compared, not when it is found).
    var hash: String?
    var fingerprint: LocalFingerprint?
    /// Whether the file is a placeholder (its stub is here, its content is not; `fingerprint` nil).
    var isPlaceholder = false
}

/// A file or folder on the provider.
struct RemoteEntry: Equatable, Sendable {
    var identifier: String
    var isFolder: Bool
    /// The provider's content version.
    var version: Data
    var size: Int64?
}

/// What both sides agreed on when the path was last in sync: the tombstone a deletion is judged
/// against, and the base a change is.
struct BaseEntry: Equatable, Sendable {
    var isFolder: Bool
    var identifier: String
    /// The provider's content version then.
    var version: Data
    /// The content's SHA-256 then (files).
    var hash: String?
    /// The local file's fingerprint then (nil for a placeholder).
    var fingerprint: LocalFingerprint?
    /// Whether the path was then a placeholder: the content on the server, a stub here.
    var isPlaceholder = false
}

/// A transfer whose outcome no base records yet: an upload sent (or about to be) without a
/// success, or a download about to take its place. After a crash the server may hold what was
/// sent (whole, or the start of it from a cut request), and the local file may be what was placed
/// and then edited: either way the server's content is this device's own, not another's change.
struct UnfinishedTransfer: Equatable, Sendable {
    /// The local file's fingerprint then (an upload's source, a download's staged file).
    var fingerprint: LocalFingerprint
    /// The SHA-256 of the content sent or placed (nil while a large upload is still being hashed).
    var hash: String?
    /// A download about to be placed (an upload otherwise).
    var isDownload = false
}
