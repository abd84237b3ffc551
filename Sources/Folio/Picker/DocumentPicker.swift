public import Foundation
import Logging

/// The document picker (UIKit's `UIDocumentPickerViewController`), in both of Apple's shapes. The
/// picker runs in the Folio daemon, out of the app's process, and shows its front end there (the
/// terminal picker `folio pick --serve`, the web picker, or a script); the app learns only what the
/// user chose, as URLs:
/// - `.import` (`forOpeningContentTypes:asCopy: true`): copies in the app's `tmp`, gone when it exits;
/// - `.open` (`asCopy: false`): the originals, security-scoped, with a grant and a reference document;
/// - `.exportToService` (`forExporting:asCopy: true`): the new copies, security-scoped;
/// - `.moveToService` (`forExporting:`): the moved documents, security-scoped.
///
/// UIKit presents the controller; here call `present()` (the delegate hears the outcome) or
/// `await pick()`.
open class DocumentPicker: @unchecked Sendable {
    /// The mode.
    public let documentPickerMode: DocumentPickerMode
    /// Receives the outcome of `present()`.
    public weak var delegate: (any DocumentPickerDelegate)?
    /// Whether the user may choose several documents (open and import).
    public var allowsMultipleSelection = false
    /// The folder the picker starts in.
    public var directoryURL: URL?
    /// Whether the picker shows file name extensions.
    public var shouldShowFileExtensions = false
    /// The types the documents must conform to (open and import).
    public let contentTypes: [UTType]
    /// The documents to export or move.
    public let urls: [URL]

    /// A picker for opening documents of `contentTypes` (`.folder` picks folders, granting access to
    /// everything inside): as copies with `asCopy`, else the originals.
    public init(forOpeningContentTypes contentTypes: [UTType], asCopy: Bool = false) {
        documentPickerMode = asCopy ? .import : .open
        self.contentTypes = contentTypes
        urls = []
    }

    /// A picker for exporting `urls` (copies, with `asCopy`) or moving them to a folder the user chooses.
    public init(forExporting urls: [URL], asCopy: Bool = false) {
        documentPickerMode = asCopy ? .exportToService : .moveToService
        contentTypes = []
        self.urls = urls
    }

    /// The iOS 8 shape for import and open: type identifiers and a mode.
    public init(documentTypes allowedUTIs: [String], in mode: DocumentPickerMode) {
        precondition(mode == .import || mode == .open, "init(documentTypes:in:) is for .import and .open; use init(urls:in:)")
        documentPickerMode = mode
        contentTypes = allowedUTIs.compactMap { UTType($0) }
        urls = []
    }

    /// The iOS 8 shape for export and move: the documents and a mode.
    public init(urls: [URL], in mode: DocumentPickerMode) {
        precondition(mode == .exportToService || mode == .moveToService, "init(urls:in:) is for .exportToService and .moveToService")
        documentPickerMode = mode
        contentTypes = []
        self.urls = urls
    }

    /// The iOS 8 shape for exporting or moving one document.
    public convenience init(url: URL, in mode: DocumentPickerMode) {
        self.init(urls: [url], in: mode)
    }

    /// Shows the picker; the delegate hears the outcome — on the operation queue `present()` was
    /// called on, or a global queue when that is the main queue or none.
    public func present() {
        let queue = OperationQueue.current.flatMap { $0 === OperationQueue.main ? nil : $0 }
        let picker = self
        // The wait for the person is a suspension, not a blocked thread.
        Task {
            let outcome: Result<[URL], any Error>
            do { outcome = .success(try await picker.pick()) } catch { outcome = .failure(error) }
            let deliver: @Sendable () -> Void = {
                guard let delegate = picker.delegate else { return }
                switch outcome {
                case .success(let urls): delegate.documentPicker(picker, didPickDocumentsAt: urls)
                case .failure(let error):
                    if (error as? CocoaError)?.code != .userCancelled {
                        Logger(label: "folio.picker").error("the document picker failed", metadata: ["error": "\(error.localizedDescription)"])
                    }
                    delegate.documentPickerWasCancelled(picker)
                }
            }
            if let queue { queue.addOperation(deliver) } else { deliver() }
        }
    }

    /// Shows the picker and returns the chosen documents' URLs.
    ///
    /// - Throws: `CocoaError.userCancelled` when the user cancels; `CocoaError.featureUnsupported`
    ///   when no daemon runs or no picker front end is attached to it.
    public func pick() async throws -> [URL] {
        guard let daemon = CoordinationEngine.current as? DaemonCoordinationEngine else {
            throw CocoaError(
                .featureUnsupported,
                userInfo: [NSLocalizedDescriptionKey: "the document picker runs in the Folio daemon, and none is running (start `folio daemon`)"])
        }
        let reply: WireValue
        do {
            reply = try await daemon.send(request, deadline: .person)
        } catch {
            throw error.publicError
        }
        var result: [URL] = []
        for item in reply["urls"]?.arrayValue ?? [] {
            guard let path = item["path"]?.stringValue else { continue }
            if item["scoped"]?.boolValue == true { SecurityScopes.shared.grant(path, readOnly: item["readOnly"]?.boolValue ?? false) }
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            result.append(URL(fileURLWithPath: path, isDirectory: isDirectory.boolValue))
        }
        return result
    }

    /// The request as the daemon receives it.
    var request: PickerRequest {
        PickerRequest(
            mode: documentPickerMode.wireMode, types: contentTypes.map(\.identifier), allowsMultipleSelection: allowsMultipleSelection,
            directory: directoryURL.map { CoordinationPath.normalize($0.path) }, urls: urls.map { CoordinationPath.normalize($0.path) },
            showsFileExtensions: shouldShowFileExtensions)
    }
}
