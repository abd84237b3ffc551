public import Foundation
import FolioSystem

/// An app's container: the folder it may use freely, as on iOS —
/// `$XDG_DATA_HOME/folio/Containers/<app-id>/{Documents,Library,tmp,Inbox}`. Everything outside it
/// needs a grant (the document picker, open in place, a bookmark of a granted item).
public struct AppContainer: Sendable, Hashable {
    /// The app's identifier (reverse DNS).
    public let appIdentifier: String
    /// The container's folder.
    public let url: URL

    /// The container of app `appIdentifier` under `paths`.
    public init(appIdentifier: String, paths: FolioPaths = FolioPaths()) {
        self.appIdentifier = appIdentifier
        url = URL(fileURLWithPath: paths.containersDirectory, isDirectory: true).appendingPathComponent(appIdentifier, isDirectory: true)
    }

    /// The running app's container: the app this process was started as (`folio run --app`, which
    /// sets `FOLIO_APP_ID`), or nil for a process that is no app.
    public static var current: AppContainer? { AppIdentity.current.map { AppContainer(appIdentifier: $0) } }

    /// `Documents`: the user's documents, shown in the browser when the app opts in.
    public var documentsURL: URL { url.appendingPathComponent("Documents", isDirectory: true) }
    /// `Library`: the app's own data (reference documents of opened originals live in `Library/References`).
    public var libraryURL: URL { url.appendingPathComponent("Library", isDirectory: true) }
    /// `tmp`: temporary files; documents imported by the picker land here and go when the app exits.
    public var temporaryURL: URL { url.appendingPathComponent("tmp", isDirectory: true) }
    /// `Inbox`: copies of documents other apps opened in this one (when it cannot open in place).
    public var inboxURL: URL { url.appendingPathComponent("Inbox", isDirectory: true) }
    /// `Library/References`: reference documents for originals opened or moved through the picker.
    public var referencesURL: URL { libraryURL.appendingPathComponent("References", isDirectory: true) }

    /// Makes the container's folders (mode 0700) where missing.
    public func create() throws {
        for folder in [documentsURL, libraryURL, temporaryURL, inboxURL, referencesURL] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }
}

/// The app this process runs as.
package enum AppIdentity {
    /// `FOLIO_APP_ID`, when it is a valid app identifier.
    package static let current: String? = {
        guard let value = ProcessInfo.processInfo.environment["FOLIO_APP_ID"], WireCheck.isValidApp(value) else { return nil }
        return value
    }()
}
