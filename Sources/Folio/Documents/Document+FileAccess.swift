import Foundation
import FolioSystem
import Logging
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension Document {
    /// Why a document could not do what was asked, when Foundation has no better error.
    static func failure(_ code: CocoaError.Code, _ url: URL, _ text: String) -> CocoaError {
        CocoaError(code, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: text])
    }

    /// The queue completion handlers go to: the caller's `OperationQueue`, as on Apple's systems —
    /// except the main queue, which on Linux only apps running Foundation's run loop service (GTK
    /// apps and command-line tools do not), so calls from it are answered on a global queue rather
    /// than never. The async forms have no such question.
    func callerQueue() -> OperationQueue? {
        guard let current = OperationQueue.current, current !== OperationQueue.main else { return nil }
        return current
    }

    /// Runs `body` on `queue` (the caller's), or on a global queue when the caller had none.
    func deliver(on queue: OperationQueue?, _ body: @escaping @Sendable () -> Void) {
        if let queue { queue.addOperation(body) } else { DispatchQueue.global().async(execute: body) }
    }

    /// Runs `body` on the caller's queue when it had one (Apple calls `load` there), else here, and
    /// waits for it.
    func runOnCallerQueue(_ queue: OperationQueue?, _ body: @escaping @Sendable () throws -> Void) throws {
        guard let queue, queue !== fileAccessQueue, OperationQueue.current !== queue else { return try body() }
        let done = DispatchSemaphore(value: 0)
        let box = ErrorBox()
        queue.addOperation {
            do { try body() } catch { box.error = error }
            done.signal()
        }
        done.wait()
        if let error = box.error { throw error }
    }

    // MARK: Opening

    func openDocument(completionHandler: (@Sendable (Bool) -> Void)?) {
        let caller = callerQueue()
        performAsynchronousFileAccess { [self] in
            let url = fileURL
            let coordinator = FileCoordinator(filePresenter: self, engine: engine)
            var coordinationError: NSError?
            var failure: (any Error)?
            coordinator.coordinate(readingItemAt: url, options: [], error: &coordinationError) { url in
                SafeSave.sweep(besides: url.path)
                do {
                    try self.readContents(from: url, caller: caller)
                    // Registered inside the read, as Apple advises, so no change is missed.
                    FileCoordinator.addFilePresenter(self, engine: self.engine)
                } catch {
                    failure = error
                }
            }
            if let error = failure ?? coordinationError {
                handleError(error, userInteractionPermitted: false)
                deliver(on: caller) { completionHandler?(false) }
                return
            }
            updateState { $0.remove(.closed) }
            refreshConflictState()
            RecentDocuments.note(fileURL, .opened, engine: engine)
            deliver(on: caller) { completionHandler?(true) }
        }
    }

    func readContents(from url: URL, caller: OperationQueue?) throws {
        let stamp = ItemStamp(path: url.path)
        guard stamp.exists else { throw Self.failure(.fileReadNoSuchFile, url, "\(url.lastPathComponent) does not exist") }
        let contents: Any
        var data: Data?
        if stamp.isDirectory {
            contents = try FileWrapper(url: url)
        } else {
            data = try readFile(url, reportingProgress: stamp.size >= Self.progressThreshold)
            contents = data!
        }
        let type = fileType
        let box = UncheckedBox(contents)
        try runOnCallerQueue(caller) { try self.load(fromContents: box.value, ofType: type) }
        base = Base(stamp: stamp, data: data)
        identity = try? DocumentIdentity.identifier(ofItemAt: url.path, creating: true)
        fileModificationDate = Date(timeIntervalSince1970: stamp.modificationTime)
    }

    /// Files from this size up are read with `progress` published (`.progressAvailable`), and the
    /// read stops when that progress is cancelled.
    static let progressThreshold: Int64 = 4 << 20

    private func readFile(_ url: URL, reportingProgress: Bool = false) throws -> Data {
        let fd = Glibc.open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code: CocoaError.Code = errno == EACCES || errno == EPERM ? .fileReadNoPermission : .fileReadNoSuchFile
            throw Self.failure(code, url, "cannot read \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(fd) }
        var progress: Progress?
        if reportingProgress {
            var status = stat()
            fstat(fd, &status)
            let made = Progress(totalUnitCount: Int64(status.st_size))
            progress = made
            setProgress(made)
            updateState { $0.insert(.progressAvailable) }
        }
        defer { if progress != nil { updateState { $0.remove(.progressAvailable) } } }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if let progress, progress.isCancelled {
                throw CocoaError(.userCancelled, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: "opening was cancelled"])
            }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.failure(.fileReadUnknown, url, "reading \(url.lastPathComponent) failed: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[..<count])
            progress?.completedUnitCount += Int64(count)
        }
        return data
    }

    // MARK: Saving

    func saveDocument(to url: URL, for saveOperation: SaveOperation, completionHandler: (@Sendable (Bool) -> Void)?) {
        let caller = callerQueue()
        let token = changeCountToken(for: saveOperation)
        let contents: Any
        let attributes: [AnyHashable: Any]
        do {
            contents = try self.contents(forType: fileType ?? UTType.data.identifier)
            attributes = try fileAttributesToWrite(to: url, for: saveOperation)
        } catch {
            saveFailed(error)
            deliver(on: caller) { completionHandler?(false) }
            return
        }
        let box = UncheckedBox((contents, attributes, token))
        performAsynchronousFileAccess { [self] in
            let (contents, attributes, token) = box.value
            let ok = performSave(contents, attributes: attributes, to: url, for: saveOperation)
            if ok { updateChangeCount(withToken: token, for: saveOperation) }
            deliver(on: caller) { completionHandler?(ok) }
        }
    }

    /// The save itself, on the file-access queue.
    func performSave(_ contents: Any, attributes: [AnyHashable: Any], to url: URL, for saveOperation: SaveOperation) -> Bool {
        let coordinator = FileCoordinator(filePresenter: self, engine: engine)
        var coordinationError: NSError?
        var failure: (any Error)?
        var conflict = false
        coordinator.coordinate(writingItemAt: url, options: [], error: &coordinationError) { url in
            do {
                if saveOperation == .forOverwriting, url.path == self.fileURL.path {
                    conflict = try self.keepOtherWritersContent(at: url, replacingWith: contents)
                }
                try self.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
                self.identity = try? DocumentIdentity.identifier(ofItemAt: url.path, creating: true)
                let stamp = ItemStamp(path: url.path)
                self.base = Base(stamp: stamp, data: contents as? Data)
                self.fileModificationDate = Date(timeIntervalSince1970: stamp.modificationTime)
            } catch {
                failure = error
            }
        }
        if let error = failure ?? coordinationError {
            saveFailed(error)
            return false
        }
        if url.path != fileURL.path {
            setFileURL(url)
            refreshPresenterRegistration()
        }
        if documentState.contains(.closed) {
            FileCoordinator.addFilePresenter(self, engine: engine)
        }
        updateState {
            $0.remove([.savingError, .closed])
            if conflict { $0.insert(.inConflict) }
        }
        RecentDocuments.note(url, saveOperation == .forCreating ? .created : .modified, engine: engine)
        return true
    }

    /// Inside the save's coordinated write: when the file changed since the document read or wrote
    /// it, and holds bytes that are neither what the document knew nor what it is about to write,
    /// those bytes become an unresolved conflict version. Returns whether they did.
    func keepOtherWritersContent(at url: URL, replacingWith contents: Any) throws -> Bool {
        let current = ItemStamp(path: url.path)
        guard let base, current.exists, !current.isDirectory, current != base.stamp else { return false }
        let disk = try readFile(url)
        if let known = base.data, disk == known { return false }
        if let new = contents as? Data, disk == new { return false }
        try versions.addVersion(ofItemAt: url.path, data: disk, kind: .conflict, isConflict: true)
        logger.notice("kept another writer's contents as a conflict version", metadata: ["file": "\(url.path)"])
        return true
    }

    private func saveFailed(_ error: any Error) {
        updateState { $0.insert(.savingError) }
        handleError(error, userInteractionPermitted: false)
    }

    func safelyWrite(
        _ contents: Any, andAttributes additionalFileAttributes: [AnyHashable: Any]?, safelyTo url: URL,
        for saveOperation: SaveOperation
    ) throws {
        let existing = ItemStamp(path: url.path)
        let temporary = SafeSave.temporaryURL(besides: url)
        do {
            try writeContents(contents, to: temporary, for: saveOperation, originalContentsURL: existing.exists ? url : nil)
            try SafeSave.commit(
                temporary, over: url, preservingAttributesOf: existing.exists ? url.path : nil,
                mode: existing.exists ? existing.mode : nil)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        if let additionalFileAttributes { try applyAttributes(additionalFileAttributes, to: url) }
    }

    func rawWrite(_ contents: Any, to url: URL, for saveOperation: SaveOperation, originalContentsURL: URL?) throws {
        switch contents {
        case let data as Data:
            try SafeSave.writeNew(data, to: url)
        case let wrapper as FileWrapper:
            try wrapper.write(to: url, options: [], originalContentsURL: originalContentsURL)
        default:
            throw Self.failure(.fileWriteUnknown, url, "contents(forType:) must return Data or a FileWrapper, not \(type(of: contents))")
        }
    }

    private func applyAttributes(_ attributes: [AnyHashable: Any], to url: URL) throws {
        if let thumbnails = attributes[URLResourceKey.thumbnailDictionaryKey] as? [AnyHashable: Any] ?? attributes[URLResourceKey.thumbnailDictionaryKey.rawValue] as? [AnyHashable: Any],
            let image = thumbnails[Thumbnails.largestKey] as? Data ?? thumbnails[Thumbnails.largestKey.rawValue] as? Data
        {
            try Thumbnails.store(image, for: url, in: thumbnailCache)
        }
        if let date = attributes[FileAttributeKey.modificationDate] as? Date ?? attributes[FileAttributeKey.modificationDate.rawValue] as? Date {
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: url.path)
        }
    }

    // MARK: Autosave, close, revert

    func autosaveDocument(completionHandler: (@Sendable (Bool) -> Void)?) {
        guard hasUnsavedChanges, !documentState.contains(.closed) else {
            completionHandler?(true)
            return
        }
        save(to: fileURL, for: .forOverwriting, completionHandler: completionHandler)
    }

    func closeDocument(completionHandler: (@Sendable (Bool) -> Void)?) {
        let caller = callerQueue()
        cancelAutosave()
        autosave { [self] saved in
            performAsynchronousFileAccess { [self] in
                FileCoordinator.removeFilePresenter(self, engine: engine)
                updateState { $0.insert(.closed) }
                deliver(on: caller) { completionHandler?(saved) }
            }
        }
    }

    func revertDocument(toContentsOf url: URL, completionHandler: (@Sendable (Bool) -> Void)?) {
        let caller = callerQueue()
        performAsynchronousFileAccess { [self] in
            let ok = performRevert(to: url, caller: caller)
            deliver(on: caller) { completionHandler?(ok) }
        }
    }

    /// The revert itself, on the file-access queue.
    func performRevert(to url: URL, caller: OperationQueue?) -> Bool {
        updateState { $0.insert(.editingDisabled) }
        disableEditing()
        defer {
            enableEditing()
            updateState { $0.remove(.editingDisabled) }
        }
        let coordinator = FileCoordinator(filePresenter: self, engine: engine)
        var coordinationError: NSError?
        var failure: (any Error)?
        coordinator.coordinate(readingItemAt: url, options: .withoutChanges, error: &coordinationError) { url in
            do { try self.readContents(from: url, caller: caller) } catch { failure = error }
        }
        if let error = failure ?? coordinationError {
            handleError(error, userInteractionPermitted: false)
            return false
        }
        updateChangeCount(.cleared)
        if url.path != fileURL.path {
            setFileURL(url)
            refreshPresenterRegistration()
        }
        refreshConflictState()
        return true
    }

    /// `.inConflict` follows the file's unresolved conflict versions.
    func refreshConflictState() {
        let conflicted = (FileVersion.unresolvedConflictVersions(ofItemAt: fileURL, store: versions)?.isEmpty == false)
        updateState { if conflicted { $0.insert(.inConflict) } else { $0.remove(.inConflict) } }
    }

    func refreshPresenterRegistration() {
        engine.refreshURL(of: self)
    }

    func scheduleAutosave() {
        guard !documentState.contains(.closed) else { return }
        let now = ContinuousClock.now
        let delay = lock.withLock { () -> Duration in
            if firstUnsavedChange == nil { firstUnsavedChange = now }
            let remaining = autosaveMaximumDelay - (now - firstUnsavedChange!)
            autosaveTimer?.cancel()
            return max(.zero, min(autosaveDelay, remaining))
        }
        let work = DispatchWorkItem { [weak self] in self?.autosave() }
        lock.withLock { autosaveTimer = work }
        let (seconds, attoseconds) = delay.components
        DispatchQueue.global().asyncAfter(
            deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)), execute: work)
    }

    func cancelAutosave() {
        lock.withLock {
            autosaveTimer?.cancel()
            autosaveTimer = nil
            firstUnsavedChange = nil
        }
    }
}

final class ErrorBox: @unchecked Sendable {
    var error: (any Error)?
}
