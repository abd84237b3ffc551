public import Foundation
import FolioSystem
public import Logging
import Synchronization

/// The registry of known types: the built-in system table, shared-mime-info's MIME types and the
/// type declarations of registered apps. `UTType`'s initialisers read `TypeRegistry.shared`.
///
/// Registering or removing an app builds a new immutable snapshot; values already made keep theirs.
/// A registration that would break the registry (a conformance cycle across apps) is refused whole
/// and leaves it as it was.
public final class TypeRegistry: Sendable {
    /// Where a registry reads its sources.
    public struct Configuration: Sendable {
        /// shared-mime-info directories, highest priority first; empty for the built-in table alone.
        public var mimeDirectories: [String]
        /// The folder of registered app manifests (`$XDG_DATA_HOME/folio/Apps`), read at start-up.
        public var appsDirectory: String?

        /// Creates a configuration.
        public init(mimeDirectories: [String], appsDirectory: String? = nil) {
            self.mimeDirectories = mimeDirectories
            self.appsDirectory = appsDirectory
        }

        /// The configuration for this user: the XDG MIME directories and Folio's Apps folder.
        /// `FOLIO_MIME_DIRS` (colon-separated) replaces the MIME directories; set it empty for none.
        public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> Self {
            let mime: [String]
            if let override = environment["FOLIO_MIME_DIRS"] {
                mime = override.split(separator: ":").map(String.init)
            } else {
                mime = SharedMimeInfo.defaultDirectories(environment: environment)
            }
            return Configuration(mimeDirectories: mime, appsDirectory: FolioPaths(environment: environment).appsDirectory)
        }
    }

    private struct State {
        var database: TypeDatabase
        var apps: [AppManifest]
    }

    private let state: Mutex<State>
    private let mimeInfo: SharedMimeInfo
    private let logger: Logger

    /// The registry `UTType`'s initialisers use, configured from the environment on first use.
    public static let shared = TypeRegistry(configuration: .standard())

    /// Creates a registry: loads shared-mime-info and the manifests in the apps folder. Manifests that
    /// fail to parse or register are logged and skipped.
    public init(
        configuration: Configuration,
        logger: Logger = Logger(label: "folio.types", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.logger = logger
        mimeInfo = SharedMimeInfo.load(directories: configuration.mimeDirectories)
        let database: TypeDatabase
        do {
            database = try TypeDatabase(declarations: SystemTypeTable.declarations, mimeInfo: mimeInfo)
        } catch {
            preconditionFailure("the built-in type table is inconsistent: \(error)")
        }
        state = Mutex(State(database: database, apps: []))
        for warning in database.warnings { logger.debug("\(warning)") }
        // A separate method, not an inline `if let` loop: with the loop inline, Swift 6.3.1 release
        // builds (default cross-module optimization) over-released `appsDirectory` and corrupted the
        // heap; `folio bench types` in a release build, run by CI, guards against its return.
        if let directory = configuration.appsDirectory { registerApps(in: directory) }
    }

    /// Registers the manifests saved in `directory`, logging and skipping those that fail.
    private func registerApps(in directory: String) {
        for manifest in AppManifest.loadAll(in: directory, logger: logger) {
            do {
                try register(manifest)
            } catch {
                logger.warning("app manifest refused", metadata: ["app": "\(manifest.bundleIdentifier)", "error": "\(error)"])
            }
        }
    }

    /// The current snapshot.
    var database: TypeDatabase { state.withLock { $0.database } }

    /// The registered apps, in registration order.
    public var apps: [AppManifest] { state.withLock { $0.apps } }

    /// The number of types known, declared and imported from shared-mime-info.
    public var typeCount: Int { database.entries.count }

    /// Registers an app's type declarations and document claims, replacing an earlier registration of
    /// the same bundle identifier.
    ///
    /// - Throws: `UniformTypeError` with `.conformanceCycle` when its declarations, with those already
    ///   registered, would form a cycle; the registry is then unchanged.
    public func register(_ manifest: AppManifest) throws(UniformTypeError) {
        try state.withLock { (state: inout State) throws(UniformTypeError) in
            var apps = state.apps.filter { $0.bundleIdentifier != manifest.bundleIdentifier }
            apps.append(manifest)
            let database = try Self.build(apps: apps, mimeInfo: mimeInfo)
            state = State(database: database, apps: apps)
        }
    }

    /// Removes an app's registration. Returns false if no app has that identifier.
    @discardableResult
    public func unregister(bundleIdentifier: String) -> Bool {
        state.withLock { state in
            let apps = state.apps.filter { $0.bundleIdentifier != bundleIdentifier }
            guard apps.count != state.apps.count else { return false }
            // Removing declarations cannot create a cycle.
            guard let database = try? Self.build(apps: apps, mimeInfo: mimeInfo) else { return false }
            state = State(database: database, apps: apps)
            return true
        }
    }

    private static func build(apps: [AppManifest], mimeInfo: SharedMimeInfo) throws(UniformTypeError) -> TypeDatabase {
        // System first, then every app's exported declarations, then imported: exported always beats
        // imported, whatever order the apps were registered in.
        let declarations = SystemTypeTable.declarations + apps.flatMap(\.exportedTypes) + apps.flatMap(\.importedTypes)
        return try TypeDatabase(declarations: declarations, mimeInfo: mimeInfo)
    }

    // MARK: Lookups bound to this registry

    /// Returns the type with `identifier` in this registry, or nil.
    public func type(withIdentifier identifier: String) -> UTType? { UTType(identifier, database: database) }

    /// Returns the type for a tag in this registry (a dynamic type when none is declared).
    public func type(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType? = .data) -> UTType? {
        UTType(tag: tag, tagClass: tagClass, conformingTo: supertype, database: database)
    }

    /// Returns every declared type in this registry with the tag, public types first.
    public func types(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType? = nil) -> [UTType] {
        let database = database
        guard UTType.isValidTag(tag, tagClass: tagClass) else { return [] }
        return UTType.indexes(tag: tag, tagClass: tagClass, conformingTo: supertype, database: database).map {
            UTType(index: $0, database: database)
        }
    }

    /// Every declared type, in declaration order.
    public var allTypes: [UTType] {
        let database = database
        return database.entries.indices.map { UTType(index: Int32($0), database: database) }
    }
}

extension TypeRegistry {
    /// Resolves what a person typed: a MIME type (contains `/`), a type identifier, or a filename
    /// extension (with or without the dot). Unknown extensions and MIME types give dynamic types;
    /// nil only for input that is none of these.
    public func type(matching query: String) -> UTType? {
        let text = String(query.trimmingSpaces())
        guard !text.isEmpty else { return nil }
        if text.contains("/") { return type(tag: text, tagClass: .mimeType, conformingTo: nil) }
        if let declared = type(withIdentifier: text) { return declared }
        let ext = text.hasPrefix(".") ? String(text.dropFirst()) : text
        if let byExtension = types(tag: ext, tagClass: .filenameExtension).first { return byExtension }
        if text.contains(".") && !text.hasPrefix(".") { return nil }
        return type(tag: ext, tagClass: .filenameExtension, conformingTo: .data)
    }
}
