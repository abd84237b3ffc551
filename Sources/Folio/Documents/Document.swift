public import Foundation
import FolioSystem
import Logging
import SystemPackage
import UniformTypes

/// A document backed by a file or package (Apple's `UIDocument`): subclass it, override
/// `contents(forType:)` and `load(fromContents:ofType:)`, and it opens, saves (safely, coordinated,
/// on its own background queue), autosaves, follows moves, reloads when another process changes the
/// file, closes when the file is deleted, and keeps both sides of a conflict.
///
/// Beyond Apple: content the document knew is kept as a `FileVersion` when another writer replaces
/// it — even one that did not coordinate — so no writer can destroy the only copy of a saved document.
///
/// Porting: declare a subclass `class MyDocument: Document, @unchecked Sendable`. `Document` is
/// `Sendable` (its state is behind a lock, and it is used from its own queues), and Swift asks a
/// subclass of an `@unchecked Sendable` class to restate it (a warning in Swift 5 and 6 modes,
/// not an error); on iOS, where `UIDocument` is main-actor isolated instead, the restatement is
/// harmless.
open class Document: FilePresenter, @unchecked Sendable {
    /// The document's state (Apple's `UIDocument.State`, same bits).
    public struct State: OptionSet, Sendable, Hashable {
        /// The state bits.
        public let rawValue: UInt
        /// Creates a state from its bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Open, nothing to report.
        public static let normal: State = []
        /// Not opened yet, or closed.
        public static let closed = State(rawValue: 1 << 0)
        /// Unresolved conflict versions exist.
        public static let inConflict = State(rawValue: 1 << 1)
        /// The last save failed.
        public static let savingError = State(rawValue: 1 << 2)
        /// Editing is unsafe right now (closing, reverting, another process writing).
        public static let editingDisabled = State(rawValue: 1 << 3)
        /// Loading or saving is under way; `progress` tells how far.
        public static let progressAvailable = State(rawValue: 1 << 4)
    }

    /// What a change did (Apple's `UIDocument.ChangeKind`).
    public enum ChangeKind: Int, Sendable {
        case done = 0, undone = 1, redone = 2, cleared = 3
    }

    /// What a save does (Apple's `UIDocument.SaveOperation`).
    public enum SaveOperation: Int, Sendable {
        /// The first save of a new file.
        case forCreating = 0
        /// Overwriting the current contents.
        case forOverwriting = 1
    }

    /// Posted on `NotificationCenter.default`, with the document as object, once per change of
    /// `documentState`.
    public static let stateChangedNotification = Notification.Name("UIDocumentStateChangedNotification")

    let engine: CoordinationEngine
    let versions: VersionStore
    let thumbnailCache: String
    let logger = Logger(label: "folio.document")
    let lock = NSLock()
    private var currentURL: URL
    private var state: State = .closed
    private var changes = 0
    private var generation = 0
    private var modificationDate: Date?
    private var stateContinuations: [UUID: AsyncStream<State>.Continuation] = [:]
    /// What the document last read or wrote: the file's stamp and, for a flat file, its bytes.
    var base: Base?
    /// The file's stable identity, as of the last open or save.
    var identity: String?
    var autosaveTimer: DispatchWorkItem?
    var firstUnsavedChange: ContinuousClock.Instant?
    var lastChange: ContinuousClock.Instant?

    struct Base {
        var stamp: ItemStamp
        var data: Data?
    }

    /// Serializes every file access of the document (Apple's `performAsynchronousFileAccess`).
    let fileAccessQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "folio.document.file-access"
        return queue
    }()

    private let presenterQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "folio.document.presenter"
        return queue
    }()

    /// Presenter messages arrive here: a serial queue of the document's own.
    open var presentedItemOperationQueue: OperationQueue { presenterQueue }

    /// How long after the last change autosave waits (it restarts with each change)…
    open var autosaveDelay: Duration = .seconds(2)
    /// …but never longer than this after the first unsaved change, however fast the edits come.
    open var autosaveMaximumDelay: Duration = .seconds(15)

    /// Creates a closed document for the file at `url`. An empty URL is a programming error.
    public init(fileURL url: URL) {
        precondition(!url.path.isEmpty, "Document(fileURL:) needs a file URL")
        currentURL = url
        engine = CoordinationEngine.current
        versions = VersionStore.current
        thumbnailCache = Thumbnails.cacheDirectory
    }

    // MARK: Properties

    /// The document's file; follows moves of the file.
    public var fileURL: URL { lock.withLock { currentURL } }

    func setFileURL(_ url: URL) { lock.withLock { currentURL = url } }

    /// The uniform type identifier of the file, from its name.
    open var fileType: String? {
        let ext = fileURL.pathExtension
        guard !ext.isEmpty else { return UTType.data.identifier }
        return UTType(tag: ext, tagClass: .filenameExtension, conformingTo: nil)?.identifier
    }

    /// The file's name without its extension.
    open var localizedName: String { fileURL.deletingPathExtension().lastPathComponent }

    /// When the file was last modified, as of the last open, save or revert.
    public var fileModificationDate: Date? {
        get { lock.withLock { modificationDate } }
        set { lock.withLock { modificationDate = newValue } }
    }

    /// Progress of a long load (files of 4 MiB and up), valid while `documentState` contains
    /// `.progressAvailable`; cancelling it stops the open, which then fails with
    /// `CocoaError.userCancelled`. Read-only, as UIDocument's.
    open var progress: Progress? { lock.withLock { currentProgress } }
    private var currentProgress: Progress?

    func setProgress(_ progress: Progress?) { lock.withLock { currentProgress = progress } }

    /// The type a save writes: the document's own (`fileType`).
    open func savingFileType() -> String? { fileType }

    /// The extension for a file of `typeName` (a uniform type identifier), for a save of
    /// `saveOperation`: the type's preferred one, else the file's own.
    open func fileNameExtension(forType typeName: String?, saveOperation: SaveOperation) -> String {
        typeName.flatMap { UTType($0)?.preferredFilenameExtension } ?? fileURL.pathExtension
    }

    /// The document's state.
    public var documentState: State { lock.withLock { state } }

    /// Every later change of `documentState`.
    public var stateChanges: AsyncStream<State> {
        let (stream, continuation) = AsyncStream<State>.makeStream()
        let id = UUID()
        lock.withLock { stateContinuations[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.lock.withLock { self?.stateContinuations.removeValue(forKey: id) } }
        return stream
    }

    /// Changes the state: one notification and one stream element per actual change.
    func updateState(_ change: (inout State) -> Void) {
        let (old, new, continuations) = lock.withLock { () -> (State, State, [AsyncStream<State>.Continuation]) in
            let old = state
            change(&state)
            return (old, state, Array(stateContinuations.values))
        }
        guard old != new else { return }
        NotificationCenter.default.post(name: Self.stateChangedNotification, object: self)
        for continuation in continuations { continuation.yield(new) }
    }

    // MARK: Change tracking

    /// Whether there are changes not saved yet.
    open var hasUnsavedChanges: Bool { lock.withLock { changes != 0 } }

    /// Records a change: `.done` and `.redone` add one, `.undone` takes one back, `.cleared` says
    /// everything is saved. Changes schedule an autosave.
    open func updateChangeCount(_ change: ChangeKind) {
        let unsaved = lock.withLock { () -> Bool in
            switch change {
            case .done, .redone: changes += 1
            case .undone: changes -= 1
            case .cleared: changes = 0
            }
            if change != .cleared { generation += 1 }
            return changes != 0
        }
        if unsaved { scheduleAutosave() } else { cancelAutosave() }
    }

    /// A token for the changes so far, taken when a save starts.
    open func changeCountToken(for saveOperation: SaveOperation) -> Any {
        lock.withLock { generation }
    }

    /// Called when a save ends: clears the changes unless more were made during the save.
    open func updateChangeCount(withToken changeCountToken: Any, for saveOperation: SaveOperation) {
        let cleared = lock.withLock { () -> Bool in
            guard let token = changeCountToken as? Int, token == generation else { return false }
            changes = 0
            return true
        }
        if cleared { cancelAutosave() }
    }

    // MARK: Editing and errors

    /// Called before editing becomes unsafe (close, revert). The default does nothing.
    open func disableEditing() {}

    /// Called when editing is safe again. The default does nothing.
    open func enableEditing() {}

    /// Reports an error from a save or open. The default logs it and calls `finishedHandlingError`.
    open func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        logger.error("document error", metadata: ["file": "\(fileURL.path)", "error": "\(error)"])
        finishedHandlingError(error, recovered: false)
    }

    /// Overriders of `handleError` call this when done.
    open func finishedHandlingError(_ error: any Error, recovered: Bool) {}

    /// Called when an error could not be shown because the user could not be asked (the
    /// default does nothing, as UIDocument's).
    open func userInteractionNoLongerPermitted(forError error: any Error) {}

    /// Runs `block` on the document's file-access queue, after any file access before it.
    open func performAsynchronousFileAccess(_ block: @escaping @Sendable () -> Void) {
        fileAccessQueue.addOperation(block)
    }

    // MARK: Loading and saving (override points)

    /// Opens the document: a coordinated read of the file on the document's queue, then
    /// `load(fromContents:ofType:)`. The handler runs on the calling queue with whether it worked.
    open func open(completionHandler: ((Bool) -> Void)? = nil) {
        openDocument(completionHandler: Self.handing(completionHandler))
    }

    /// Reads the document's contents from `url` and loads them: `Data` for a file, a `FileWrapper`
    /// for a package. Called inside a coordinated read; override to read differently.
    open func read(from url: URL) throws {
        try readContents(from: url, caller: nil)
    }

    /// Override: make the document's model from `contents` (`Data` for a file, a `FileWrapper` for
    /// a package). `typeName` is the file's uniform type identifier. Runs on the queue that called
    /// `open` when that is an `OperationQueue` (as on Apple's systems), else on the document's queue.
    open func load(fromContents contents: Any, ofType typeName: String?) throws {
        throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "\(type(of: self)) must override load(fromContents:ofType:)"])
    }

    /// Override: the document's model as `Data` (a file) or a `FileWrapper` (a package). Called on
    /// the calling queue at the start of a save.
    open func contents(forType typeName: String) throws -> Any {
        throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "\(type(of: self)) must override contents(forType:)"])
    }

    /// Saves to `url`: the change token, `contents(forType:)` and `fileAttributesToWrite` on the
    /// calling queue, then a coordinated safe write on the document's queue. A save whose base is no
    /// longer the file's content (another writer got there first) keeps the other content as an
    /// unresolved conflict version (unless the bytes are the same) and flags `.inConflict`.
    open func save(to url: URL, for saveOperation: SaveOperation, completionHandler: ((Bool) -> Void)? = nil) {
        saveDocument(to: url, for: saveOperation, completionHandler: Self.handing(completionHandler))
    }

    /// Attributes for the written file. Return `[URLResourceKey.thumbnailDictionaryKey:
    /// [URLThumbnailDictionaryItem.NSThumbnail1024x1024SizeKey: pngData]]` to save a thumbnail.
    open func fileAttributesToWrite(to url: URL, for saveOperation: SaveOperation) throws -> [AnyHashable: Any] {
        [:]
    }

    /// The safe-save step: writes `contents` beside `url` (through `writeContents(_:to:for:originalContentsURL:)`),
    /// flushes it, gives it the old file's mode and `user.` attributes (identity, tags), renames it
    /// over `url` and flushes the folder. A crash at any instant leaves the old or the new contents.
    open func writeContents(
        _ contents: Any, andAttributes additionalFileAttributes: [AnyHashable: Any]? = nil, safelyTo url: URL,
        for saveOperation: SaveOperation
    ) throws {
        try safelyWrite(contents, andAttributes: additionalFileAttributes, safelyTo: url, for: saveOperation)
    }

    /// The raw writer: `Data` to a file, a `FileWrapper` to a folder. Override to write the
    /// on-disk representation yourself.
    open func writeContents(_ contents: Any, to url: URL, for saveOperation: SaveOperation, originalContentsURL: URL?) throws {
        try rawWrite(contents, to: url, for: saveOperation, originalContentsURL: originalContentsURL)
    }

    /// Saves if there are unsaved changes (Apple's "saveless" model), then calls the handler.
    open func autosave(completionHandler: ((Bool) -> Void)? = nil) {
        autosaveDocument(completionHandler: Self.handing(completionHandler))
    }

    /// Saves unsaved changes, then closes: the document stops presenting its file and is `.closed`.
    open func close(completionHandler: ((Bool) -> Void)? = nil) {
        closeDocument(completionHandler: Self.handing(completionHandler))
    }

    /// Drops unsaved changes and loads the contents of `url` (a coordinated read), with editing
    /// disabled meanwhile.
    open func revert(toContentsOf url: URL, completionHandler: ((Bool) -> Void)? = nil) {
        revertDocument(toContentsOf: url, completionHandler: Self.handing(completionHandler))
    }

    /// Apple's handlers are not `@Sendable` (code written for `UIDocument` passes and forwards
    /// plain closures); the document calls each once, from its own queues, as UIDocument does.
    static func handing<Argument>(_ handler: ((Argument) -> Void)?) -> (@Sendable (Argument) -> Void)? {
        handler.map { handing($0) }
    }

    /// The same for a handler that must be called.
    static func handing<Argument>(_ handler: @escaping (Argument) -> Void) -> @Sendable (Argument) -> Void {
        let box = UncheckedBox(handler)
        return { box.value($0) }
    }

    // MARK: FilePresenter

    /// The document's file.
    open var presentedItemURL: URL? { fileURL }

    /// No primary item.
    open var primaryPresentedItemURL: URL? { nil }

    /// Another process wants to read: at once (unsaved changes were saved first, by
    /// `savePresentedItemChanges`).
    open func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        reader(nil)
    }

    /// Another process wants to read: unsaved changes are saved first (what you see is what gets
    /// copied).
    open func savePresentedItemChanges(completionHandler: @escaping ((any Error)?) -> Void) {
        presenterSave(Self.handing(completionHandler))
    }

    /// Another process wants to write: the document's own file access waits until it is done.
    open func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        presenterRelinquishToWriter(writer)
    }

    /// The file is about to be deleted: the document closes.
    open func accommodatePresentedItemDeletion(completionHandler: @escaping ((any Error)?) -> Void) {
        presenterAccommodateDeletion(Self.handing(completionHandler))
    }

    /// The Drive is about to evict the file's local copy: the document closes, as for a deletion
    /// (its content is saved first, and stays on the server).
    open func accommodatePresentedItemEviction(completionHandler: @escaping ((any Error)?) -> Void) {
        presenterAccommodateDeletion(Self.handing(completionHandler))
    }

    /// The file moved: `fileURL` follows.
    open func presentedItemDidMove(to newURL: URL) {
        setFileURL(newURL)
    }

    /// Another writer changed the file: the content the document knew is kept as a version, then the
    /// document reloads (or, with unsaved changes, keeps both sides as a conflict).
    open func presentedItemDidChange() {
        presenterDidChange()
    }

    /// A version of the file appeared (another device's side of a conflict, say): `.inConflict`
    /// follows the file's unresolved conflict versions.
    open func presentedItemDidGain(_ version: FileVersion) {
        refreshConflictState()
    }

    /// A version of the file went away: `.inConflict` follows.
    open func presentedItemDidLose(_ version: FileVersion) {
        refreshConflictState()
    }

    /// A conflict version was resolved (here or by another process): `.inConflict` follows.
    open func presentedItemDidResolveConflict(_ version: FileVersion) {
        refreshConflictState()
    }

    // The rest of `FilePresenter`, declared here so that subclasses can override them (as with
    // `UIDocument`): each does what a presenter without it gets.

    /// Ubiquity attributes the document observes changed: nothing by default.
    open func presentedItemDidChangeUbiquityAttributes(_ attributes: Set<URLResourceKey>) {}

    /// The ubiquity attributes the document wants to hear about: none by default.
    open var observedPresentedItemUbiquityAttributes: Set<URLResourceKey> { [] }

    /// An item inside the package is about to be deleted: the deletion goes ahead.
    open func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping ((any Error)?) -> Void) {
        completionHandler(nil)
    }

    /// An item appeared inside the package: the document hears `presentedItemDidChange`.
    open func presentedSubitemDidAppear(at url: URL) { changeOfPackageContents() }

    /// An item inside the package moved: the document hears `presentedItemDidChange`.
    open func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) { changeOfPackageContents() }

    /// An item inside the package changed: the document hears `presentedItemDidChange`.
    open func presentedSubitemDidChange(at url: URL) { changeOfPackageContents() }

    /// An item inside the package gained a version: nothing by default.
    open func presentedSubitem(at url: URL, didGain version: FileVersion) {}

    /// An item inside the package lost a version: nothing by default.
    open func presentedSubitem(at url: URL, didLose version: FileVersion) {}

    /// A conflict of an item inside the package was resolved: nothing by default.
    open func presentedSubitem(at url: URL, didResolve version: FileVersion) {}
}
