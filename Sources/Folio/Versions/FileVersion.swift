public import Foundation
import Logging

/// A version of a file (Apple's `NSFileVersion`): the current contents, or an earlier or conflicting
/// one kept in the version store. Versions are keyed by the document's stable identity, so they
/// follow renames and moves within the volume.
///
/// Make changes (`replaceItem`, `remove`, `removeOtherVersionsOfItem`, resolving conflicts) inside a
/// coordinated write of the item, as Apple asks.
open class FileVersion: Hashable, CustomStringConvertible, @unchecked Sendable {
    /// Options for `addOfItem(at:withContentsOf:options:)`.
    public struct AddingOptions: OptionSet, Sendable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Move the contents into the store instead of copying them.
        public static let byMoving = AddingOptions(rawValue: 1 << 0)
    }

    /// Options for `replaceItem(at:options:)`.
    public struct ReplacingOptions: OptionSet, Sendable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Remove the version from the store once it replaced the item.
        public static let byMoving = ReplacingOptions(rawValue: 1 << 0)
    }

    let store: VersionStore
    let identity: String
    /// The item the version belongs to, as it was found.
    let itemPath: String
    /// Nil for the current version.
    let record: VersionRecord?
    private let lock = NSLock()
    private var resolved: Bool
    private var markedDiscardable = false

    init(store: VersionStore, identity: String, itemPath: String, record: VersionRecord?) {
        self.store = store
        self.identity = identity
        self.itemPath = itemPath
        self.record = record
        resolved = record?.isResolved ?? false
    }

    // MARK: Finding versions

    /// The item's current version, or nil when there is no item at `url`.
    public class func currentVersionOfItem(at url: URL) -> FileVersion? {
        let path = CoordinationPath.normalize(url.path)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let identity = (try? VersionStore.current.identity(ofItemAt: path, creating: false).identity) ?? "inode-0-0"
        return FileVersion(store: .current, identity: identity, itemPath: path, record: nil)
    }

    /// Every version except the current one, oldest first; nil when there is no item at `url` (or its
    /// entry in the store is damaged — `versions(ofItemAt:)` says why).
    public class func otherVersionsOfItem(at url: URL) -> [FileVersion]? {
        try? versions(ofItemAt: url)
    }

    /// The conflict versions not resolved yet; nil when there is no item at `url`.
    public class func unresolvedConflictVersionsOfItem(at url: URL) -> [FileVersion]? {
        unresolvedConflictVersions(ofItemAt: url, store: .current)
    }

    class func unresolvedConflictVersions(ofItemAt url: URL, store: VersionStore) -> [FileVersion]? {
        (try? versions(ofItemAt: url, store: store))?.filter { $0.isConflict && !$0.isResolved }
    }

    /// The version with `persistentIdentifier` (as archived from `persistentIdentifier`: an
    /// `NSString`, or a `String`), or nil.
    public class func version(itemAt url: URL, forPersistentIdentifier persistentIdentifier: Any) -> FileVersion? {
        guard let wanted = (persistentIdentifier as? String) ?? (persistentIdentifier as? NSString).map({ String(describing: $0) }) else { return nil }
        if let current = currentVersionOfItem(at: url), current.identifier == wanted { return current }
        return (try? versions(ofItemAt: url))?.first { $0.identifier == wanted }
    }

    /// The versions of the item kept on other devices that are not here (Apple's reach iCloud's
    /// servers). Folio keeps every version locally (the Drive brings conflicts here as versions),
    /// so the handler gets an empty list, on a queue of its own.
    public class func getNonlocalVersionsOfItem(at url: URL, completionHandler: @escaping @Sendable ([FileVersion]?, (any Error)?) -> Void) {
        DispatchQueue(label: "folio.versions.nonlocal").async { completionHandler([], nil) }
    }

    /// Every version except the current one, oldest first — throwing instead of returning nil, so a
    /// missing item and a damaged store entry can be told apart.
    public class func versions(ofItemAt url: URL) throws -> [FileVersion] {
        try versions(ofItemAt: url, store: .current)
    }

    /// The versions of the item a daemon resolved once: its identity read through `access` (its
    /// descriptor's `/proc/self/fd` path), the versions known at `path`, its real location.
    package class func versions(reaching access: String, at path: String) throws -> [FileVersion] {
        let (identity, records) = try VersionStore.current.versions(ofItemAt: access, seenAt: path)
        return records.map { FileVersion(store: .current, identity: identity, itemPath: path, record: $0) }
    }

    /// Puts this version's contents in place of the item named `name` in the folder reached at
    /// `folder` (a descriptor's `/proc/self/fd` path: the folder a check resolved), with the mode
    /// and attributes of the item reached at `item`, and keeps the contents it replaces as a
    /// version first. What a name on the way leads to by now plays no part.
    package func replaceItem(named name: String, inFolderAt folder: String, reaching item: String) throws {
        guard let record else { return }
        let kept = try store.addVersion(ofItemAt: item, shownAt: itemPath, seenAt: itemPath, kind: .manual).record
        Self.tellPresenters(at: itemPath, [(.gained, kept)])
        try store.restore(record, to: folder + "/" + name, attributesFrom: item)
    }

    class func versions(ofItemAt url: URL, store: VersionStore) throws -> [FileVersion] {
        let path = CoordinationPath.normalize(url.path)
        let (identity, records) = try store.versions(ofItemAt: path)
        return records.map { FileVersion(store: store, identity: identity, itemPath: path, record: $0) }
    }

    /// Stores the contents at `contentsURL` as a new version of the item at `url` (Apple's macOS API;
    /// also how an app keeps a local version). With `.byMoving` the contents file is removed.
    public class func addOfItem(at url: URL, withContentsOf contentsURL: URL, options: AddingOptions = []) throws -> FileVersion {
        try addOfItem(at: url, withContentsOf: contentsURL, options: options, store: .current)
    }

    class func addOfItem(at url: URL, withContentsOf contentsURL: URL, options: AddingOptions, store: VersionStore) throws -> FileVersion {
        let path = CoordinationPath.normalize(url.path)
        let (identity, record) = try store.addVersion(ofItemAt: path, contentsOf: contentsURL.path, kind: .manual)
        if options.contains(.byMoving) { try? FileManager.default.removeItem(at: contentsURL) }
        tellPresenters(at: path, [(.gained, record)])
        return FileVersion(store: store, identity: identity, itemPath: path, record: record)
    }

    /// A folder for writing the contents of a new version before `addOfItem`.
    public class func temporaryDirectoryURLForNewVersionOfItem(at url: URL) -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("folio-version-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Removes every version but the current one.
    public class func removeOtherVersionsOfItem(at url: URL) throws {
        let path = CoordinationPath.normalize(url.path)
        // What goes is read first only when this process's presenters are to be told of it.
        let removed = inProcessArbiter == nil ? [] : (try? VersionStore.current.versions(ofItemAt: path).1) ?? []
        try VersionStore.current.removeAll(ofItemAt: path)
        tellPresenters(at: path, removed.map { (.lost, $0) })
    }

    /// Tells this process's presenters of the item at `path` that its versions changed, when no
    /// daemon does: with one, the daemon watches the store and tells every process's presenters
    /// (`VersionStoreWatcher`); in process, this engine's arbiter is the only one to tell.
    static func tellPresenters(at path: String, _ changes: [(VersionChange, VersionRecord)]) {
        guard !changes.isEmpty else { return }
        inProcessArbiter?.versionsChanged(at: path, changes)
    }

    /// The arbiter to tell of version changes: the in-process engine's; nil when the daemon tells.
    private static var inProcessArbiter: CoordinationArbiter? { (CoordinationEngine.current as? LocalCoordinationEngine)?.arbiter }

    // MARK: The version

    /// Where the version's contents are: the item itself for the current version, a read-only file
    /// in the store otherwise. Never show it to users.
    public var url: URL {
        guard let record else { return URL(fileURLWithPath: itemPath) }
        return URL(fileURLWithPath: store.objectPath(record.object))
    }

    /// The document's name when the version was made.
    public var localizedName: String? { record?.name ?? (itemPath as NSString).lastPathComponent }

    /// The computer that made the version.
    public var localizedNameOfSavingComputer: String? { record?.savingComputer ?? VersionStore.hostName }

    /// When the version's contents were last modified.
    public var modificationDate: Date? {
        if let record { return Date(timeIntervalSince1970: record.modificationDate) }
        return (try? FileManager.default.attributesOfItem(atPath: itemPath))?[.modificationDate] as? Date
    }

    /// A stable identifier, suitable for archiving (`NSKeyedArchiver`), of this version of this
    /// item: an `NSString`, as Apple's is an object that conforms to `NSCoding`.
    public var persistentIdentifier: any NSCoding { NSString(string: identifier) }

    /// Folio: ``persistentIdentifier`` as a `String`, for Swift code that needs no archiving.
    public var identifier: String { record?.id ?? "current-" + identity }

    /// Why Folio kept the version: `current`, `manual`, `saved`, `conflict` or `external`
    /// (contents another writer replaced).
    public var kindName: String { record?.kind.rawValue ?? "current" }

    /// Whether the version lost an automatic conflict resolution.
    public var isConflict: Bool { record?.isConflict ?? false }

    /// Whether the conflict is resolved. Set it to true once handled; setting it to false is a
    /// programming error (Apple raises an exception; this is a precondition failure).
    public var isResolved: Bool {
        get { lock.withLock { resolved } }
        set {
            precondition(newValue, "FileVersion.isResolved can only be set to true")
            guard let record, !isResolved else { return }
            do {
                try store.markResolved(record.id, identity: identity, path: itemPath)
                lock.withLock { resolved = true }
                var resolvedRecord = record
                resolvedRecord.isResolved = true
                Self.tellPresenters(at: itemPath, [(.resolved, resolvedRecord)])
            } catch {
                store.logger.error("cannot mark a version resolved", metadata: ["version": "\(record.id)", "error": "\(error)"])
            }
        }
    }

    /// Whether the version may be discarded by the system to free space: local versions and
    /// resolved conflicts may, and so may a version an app marks so (true only: setting it to
    /// false is a programming error, as Apple raises an exception). The mark lasts as long as
    /// this object (Folio's store keeps versions until they are removed).
    public var isDiscardable: Bool {
        get { lock.withLock { markedDiscardable } || (record.map { !$0.isConflict || $0.isResolved } ?? false) }
        set {
            precondition(newValue, "FileVersion.isDiscardable can only be set to true")
            lock.withLock { markedDiscardable = true }
        }
    }

    /// Whether the contents are on this machine (always, for now: versions are stored locally).
    public var hasLocalContents: Bool { true }

    /// Whether a thumbnail is kept with the version (never: Folio keeps a document's thumbnail
    /// with the document).
    public var hasThumbnail: Bool { false }

    /// Who made the version, when another person did (nil: Folio's versions are this user's).
    public var originatorNameComponents: PersonNameComponents? { nil }

    /// Puts this version's contents in place of the item at `url` (safely, keeping the item's
    /// identity and attributes) and returns the item's URL. `.byMoving` removes the version.
    @discardableResult
    public func replaceItem(at url: URL, options: ReplacingOptions = []) throws -> URL {
        guard let record else { return url }  // the current version is already in place
        let path = CoordinationPath.normalize(url.path)
        try store.restore(record, to: path)
        if options.contains(.byMoving) {
            try store.remove(record.id, identity: identity, path: path)
            Self.tellPresenters(at: path, [(.lost, record)])
        }
        return url
    }

    /// Removes this version from the store. The current version cannot be removed.
    public func remove() throws {
        guard let record else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "the current version cannot be removed"])
        }
        try store.remove(record.id, identity: identity, path: itemPath)
        Self.tellPresenters(at: itemPath, [(.lost, record)])
    }

    // MARK: Equality

    public static func == (lhs: FileVersion, rhs: FileVersion) -> Bool {
        lhs.identity == rhs.identity && lhs.identifier == rhs.identifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identity)
        hasher.combine(identifier)
    }

    public var description: String {
        "FileVersion(\(identifier), \(localizedName ?? "?")\(isConflict ? ", conflict" : "")\(isResolved ? ", resolved" : ""))"
    }
}
