public import Foundation
public import Logging
public import FolioSystem
import Synchronization

/// Chooses the app that opens a document, the way Launch Services does, with the user in charge:
///
/// 1. A choice the user made (`setDefaultHandler`) for the type or, failing that, for the nearest
///    type it conforms to.
/// 2. A default the user set in freedesktop `mimeapps.list` for one of those types' MIME types.
/// 3. The handler a type already had when another app was installed (installing an app never
///    silently takes over an existing default; it only becomes a candidate).
/// 4. Otherwise the apps that claim the nearest type in `CFBundleDocumentTypes`, by `LSHandlerRank`
///    (Owner > Default > Alternate; None is never chosen), then role (Editor before Viewer), then
///    installation order.
///
/// Choices are kept in `$XDG_CONFIG_HOME/folio/handlers.json`, written atomically.
public final class HandlerRegistry: Sendable {
    /// What opens a document.
    public enum Handler: Sendable, Hashable, CustomStringConvertible {
        /// A Folio app, by bundle identifier.
        case app(String)
        /// A freedesktop application, by desktop entry id (`org.gnome.eog.desktop`).
        case desktopEntry(String)

        public var description: String {
            switch self {
            case .app(let id): id
            case .desktopEntry(let id): id
            }
        }
    }

    /// Why a handler was chosen.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// The user chose it in Folio.
        case userChoice = "user-choice"
        /// The user's `mimeapps.list` names it.
        case mimeappsDefault = "mimeapps.list"
        /// It was the handler before a later app was installed.
        case established
        /// It claims the type with the best rank.
        case rank
        /// A desktop application associated with the type (added in `mimeapps.list`, or declaring
        /// it: `mimeinfo.cache`), when no Folio app claims it.
        case desktopAssociation = "desktop-association"
    }

    /// The chosen handler for a type, and why.
    public struct Choice: Sendable, Hashable {
        /// What opens the document.
        public var handler: Handler
        /// Why it was chosen.
        public var reason: Reason
        /// The type the choice was made for: the document's type or one it conforms to.
        public var matchedType: UTType
    }

    /// An app that claims a type, as a candidate to open it.
    public struct Candidate: Sendable, Hashable {
        /// The app's bundle identifier.
        public var bundleIdentifier: String
        /// Its rank for the type.
        public var rank: HandlerRank
        /// Its role for the type.
        public var role: DocumentRole
        /// The claimed type: the document's type or one it conforms to.
        public var matchedType: UTType
    }

    private struct Stored: Codable, Sendable {
        var userChoices: [String: String] = [:]
        var established: [String: String] = [:]
    }

    /// The type registry the apps are registered in.
    public let types: TypeRegistry
    private let storeFile: String?
    private let mimeApps: MimeAppsList
    private let paths: FolioPaths?
    private let stored: Mutex<Stored>
    private let logger: Logger

    /// Creates a handler registry over `types`, reading the user's choices from `paths` (nil: keep
    /// choices in memory only) and the `mimeapps.list` defaults for `desktops` (from
    /// `$XDG_CURRENT_DESKTOP` by default).
    public init(
        types: TypeRegistry, paths: FolioPaths?, desktops: [String]? = nil,
        logger: Logger = Logger(label: "folio.handlers", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.types = types
        self.logger = logger
        storeFile = paths.map { $0.configDirectory + "/handlers.json" }
        let desktopNames = desktops
            ?? (ProcessInfo.processInfo.environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").map(String.init)
        mimeApps = paths.map { MimeAppsList(files: MimeAppsList.files(paths: $0, desktops: desktopNames), applicationFolders: DesktopEntry.folders(paths: $0)) } ?? MimeAppsList()
        self.paths = paths
        var initial = Stored()
        if let file = storeFile, let data = FileManager.default.contents(atPath: file) {
            if let decoded = try? JSONDecoder().decode(Stored.self, from: data) {
                initial = decoded
            } else {
                logger.warning("ignoring unreadable handler choices", metadata: ["file": "\(file)"])
            }
        }
        stored = Mutex(initial)
    }

    // MARK: Installing apps

    /// Registers an app's manifest. For every type it claims that already had a handler chosen by
    /// rank, that handler is kept as the established default, so the new app is offered as a
    /// candidate but takes nothing over.
    ///
    /// - Throws: `UniformTypeError` when the registry refuses the manifest; nothing changes then.
    public func install(_ manifest: AppManifest) throws(UniformTypeError) {
        var keep: [String: String] = [:]
        let isUpdate = types.apps.contains { $0.bundleIdentifier == manifest.bundleIdentifier }
        if !isUpdate {
            for identifier in manifest.documentTypes.flatMap(\.contentTypes) {
                guard let type = types.type(withIdentifier: identifier),
                    let current = choice(for: type), current.reason == .rank,
                    current.matchedType == type, case .app(let app) = current.handler
                else { continue }
                keep[TypeIdentifier.key(identifier)] = app
            }
        }
        try types.register(manifest)
        if !keep.isEmpty {
            try? update { stored in
                for (type, app) in keep where stored.established[type] == nil { stored.established[type] = app }
            }
        }
    }

    /// Removes an app and every choice that names it.
    @discardableResult
    public func uninstall(bundleIdentifier: String) -> Bool {
        let removed = types.unregister(bundleIdentifier: bundleIdentifier)
        try? update { stored in
            stored.userChoices = stored.userChoices.filter { $0.value != bundleIdentifier }
            stored.established = stored.established.filter { $0.value != bundleIdentifier }
        }
        return removed
    }

    // MARK: Choosing

    /// Records the user's choice of app for `type` (and the types that conform to it, unless they
    /// have a choice of their own). Pass nil to forget the choice.
    ///
    /// - Throws: `UniformTypeError(.unknownApp)` when no registered app has that identifier, or
    ///   `.unreadableFile` when the choice cannot be saved.
    public func setDefaultHandler(_ bundleIdentifier: String?, for type: UTType) throws(UniformTypeError) {
        if let bundleIdentifier, !types.apps.contains(where: { $0.bundleIdentifier == bundleIdentifier }) {
            throw UniformTypeError(.unknownApp, "no app \(bundleIdentifier) is registered")
        }
        try update { $0.userChoices[TypeIdentifier.key(type.identifier)] = bundleIdentifier }
    }

    /// Returns the handler for a document of `type`, or nil when nothing can open it.
    public func choice(for type: UTType) -> Choice? {
        let chain = [type] + type.supertypesNearestFirst
        let stored = stored.withLock { $0 }
        let installed = Set(types.apps.map(\.bundleIdentifier))
        for t in chain {
            if let app = stored.userChoices[TypeIdentifier.key(t.identifier)], installed.contains(app) {
                return Choice(handler: .app(app), reason: .userChoice, matchedType: t)
            }
        }
        for t in chain {
            for mime in t.tags[.mimeType] ?? [] {
                if let entry = mimeApps.defaultEntry(for: mime) {
                    return Choice(handler: .desktopEntry(entry), reason: .mimeappsDefault, matchedType: t)
                }
            }
        }
        for t in chain {
            if let app = stored.established[TypeIdentifier.key(t.identifier)], installed.contains(app) {
                return Choice(handler: .app(app), reason: .established, matchedType: t)
            }
        }
        if let best = candidates(for: type).first(where: { $0.rank != .none }) {
            return Choice(handler: .app(best.bundleIdentifier), reason: .rank, matchedType: best.matchedType)
        }
        if let (entry, matched) = desktopCandidates(for: type).first {
            return Choice(handler: .desktopEntry(entry.id), reason: .desktopAssociation, matchedType: matched)
        }
        return nil
    }

    /// The desktop applications associated with `type` or a type it conforms to (nearest first;
    /// for each, the added associations, then the installed applications that declare it), that
    /// can be found and started.
    public func desktopCandidates(for type: UTType) -> [(entry: DesktopEntry, matchedType: UTType)] {
        guard let paths else { return [] }
        var result: [(DesktopEntry, UTType)] = []
        var seen = Set<String>()
        for t in [type] + type.supertypesNearestFirst {
            for mime in t.tags[.mimeType] ?? [] {
                for id in mimeApps.associatedEntries(for: mime) where seen.insert(id).inserted {
                    if let entry = DesktopEntry.find(id, paths: paths) { result.append((entry, t)) }
                }
            }
        }
        return result
    }

    /// Returns the handler for the document at `url`, from its content type.
    public func choice(forItemAt url: URL) throws -> Choice? {
        try choice(for: UTType.contentType(ofItemAt: url, database: types.database).type)
    }

    /// Every app that claims `type` or a type it conforms to: nearest claimed type first, then by
    /// rank, role and installation order. Apps with rank None are listed last; they never open it.
    public func candidates(for type: UTType) -> [Candidate] {
        let chain = [type] + type.supertypesNearestFirst
        var result: [Candidate] = []
        var seen = Set<String>()
        let apps = types.apps
        for (distance, t) in chain.enumerated() {
            var level: [(Candidate, Int)] = []
            for (order, app) in apps.enumerated() where !seen.contains(app.bundleIdentifier) {
                var best: DocumentTypeClaim?
                for claim in app.documentTypes where Self.claim(claim, covers: t, exactType: distance == 0 ? type : nil) {
                    if best == nil || (claim.rank, Self.roleOrder(claim.role)) > (best!.rank, Self.roleOrder(best!.role)) {
                        best = claim
                    }
                }
                if let best {
                    level.append((Candidate(bundleIdentifier: app.bundleIdentifier, rank: best.rank, role: best.role, matchedType: t), order))
                }
            }
            level.sort { a, b in
                if a.0.rank != b.0.rank { return a.0.rank > b.0.rank }
                if a.0.role != b.0.role { return Self.roleOrder(a.0.role) > Self.roleOrder(b.0.role) }
                return a.1 < b.1
            }
            for (candidate, _) in level where seen.insert(candidate.bundleIdentifier).inserted { result.append(candidate) }
        }
        return result.filter { $0.rank != .none } + result.filter { $0.rank == .none }
    }

    private static func roleOrder(_ role: DocumentRole) -> Int {
        switch role {
        case .editor: 3
        case .viewer: 2
        case .shell: 1
        case .none: 0
        }
    }

    /// Whether a claim covers `type`: by `LSItemContentTypes`, or, for legacy claims without them,
    /// by extension or MIME type of the document's own type.
    private static func claim(_ claim: DocumentTypeClaim, covers type: UTType, exactType: UTType?) -> Bool {
        if !claim.contentTypes.isEmpty {
            let key = TypeIdentifier.key(type.identifier)
            return claim.contentTypes.contains { TypeIdentifier.key($0) == key }
        }
        guard let exactType else { return false }
        let extensions = Set((exactType.tags[.filenameExtension] ?? []).map { $0.lowercased() })
        let mimes = Set((exactType.tags[.mimeType] ?? []).map { $0.lowercased() })
        return claim.extensions.contains { extensions.contains($0.lowercased()) || $0 == "*" }
            || claim.mimeTypes.contains { mimes.contains($0.lowercased()) }
    }

    private func update(_ body: (inout Stored) -> Void) throws(UniformTypeError) {
        let snapshot = stored.withLock { stored -> Stored in
            body(&stored)
            return stored
        }
        guard let file = storeFile else { return }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(snapshot)
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try AtomicFile.write(data, to: file)
        } catch {
            throw UniformTypeError(.unreadableFile, "cannot save handler choices to \(file): \(error)")
        }
    }
}
