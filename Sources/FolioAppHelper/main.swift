// A stand-in app for the isolation tests: run as an app (`FOLIO_APP_ID`, usually through
// `folio run --app`), it does one thing through Folio's public API and prints one JSON line.
//
//   read <path> | write <path> <text>           coordinated read / write
//   save-document <path> <text>                 a Document subclass saved there (forCreating), closed
//   open-document <path>                        the same subclass opened and closed: its text
//   bookmark <path> [--read-only]               bookmark data, base64
//   resolve <base64> [--write <text>]           resolve (access starts), read, optionally write
//   values <base64>                             resourceValues(forKeys:fromBookmarkData:)
//   start <path>                                startAccessingSecurityScopedResource()
//   pick open|import|export|move [--type T]… [--multiple] [--folder D] [--url U]… [--write <text>]
//        [--bookmark] [--present]                (legacy-… for the iOS 8 initialisers)
//   container                                   the app's container and ubiquity container
//   ubiquity <path>                             isUbiquitousItem and the ubiquity resource values
//   evict <path> | download <path>              evictUbiquitousItem / startDownloadingUbiquitousItem
//   ubiquitous <from> <to> true|false           setUbiquitous(_:itemAt:destinationURL:)
//   publish <path>                              url(forPublishingUbiquitousItemAt:expiration:)
//   query <predicate>                           a MetadataQuery over the ubiquitous documents scope:
//                                               the results gathered, with their uploaded state
//   check <path> [--write]                      the daemon's access decision
//   relay                                       copies bytes between stdin/stdout and the daemon's
//                                               socket (the attack suite speaks the protocol
//                                               through it from inside the sandbox)
//   hold <n>                                    opens n connections, sends each the start of a
//                                               frame, prints "held <n>", and keeps them until
//                                               stdin ends (slowloris, from inside the sandbox)
//   keep-open <path>                            opens the Document subclass, prints "opened",
//                                               then "closed" once something closes it (an
//                                               eviction, a deletion), within a minute
//   present <path>                              a plain presenter of the file (it accommodates
//                                               no eviction), kept until stdin ends (2 min at most)
//   identity <n>                                the ubiquity identity token, then the token after
//                                               each of n NSUbiquityIdentityDidChange (30 s each)
//   <absolute path>                             as started by `folio open`: read it
import FolioSystem
import Folio
import Foundation

func emit(_ value: WireValue) {
    FileHandle.standardOutput.write(Data(value.serialized() + [UInt8(ascii: "\n")]))
}

func failure(_ error: any Error) -> WireValue {
    let ns = error as NSError
    var object: [String: WireValue] = ["ok": false, "domain": .string(ns.domain), "code": .int(Int64(ns.code)), "message": .string(ns.localizedDescription)]
    if let posix = ns.userInfo[NSUnderlyingErrorKey] as? POSIXError { object["posix"] = .int(Int64(posix.code.rawValue)) }
    return .object(object)
}

func coordinatedRead(_ url: URL) throws -> String {
    var text = ""
    var inner: (any Error)?
    var error: NSError?
    FileCoordinator().coordinate(readingItemAt: url, options: [], error: &error) { url in
        do { text = try String(contentsOf: url, encoding: .utf8) } catch { inner = error }
    }
    if let error { throw error }
    if let inner { throw inner }
    return text
}

func coordinatedWrite(_ url: URL, _ text: String) throws {
    var inner: (any Error)?
    var error: NSError?
    FileCoordinator().coordinate(writingItemAt: url, options: [], error: &error) { url in
        do { try Data(text.utf8).write(to: url) } catch { inner = error }
    }
    if let error { throw error }
    if let inner { throw inner }
}

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func options(_ name: String, in arguments: [String]) -> [String] {
    arguments.indices.filter { arguments[$0] == name && $0 + 1 < arguments.count }.map { arguments[$0 + 1] }
}

// An impostor test: the app claims another identity than the one it was started as.
if let claim = ProcessInfo.processInfo.environment["FOLIO_HELPER_CLAIM"] { setenv("FOLIO_APP_ID", claim, 1) }

let arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.first ?? ""
let rest = Array(arguments.dropFirst())

switch command {
case "read":
    do { emit(["ok": true, "text": .string(try coordinatedRead(URL(fileURLWithPath: rest[0])))]) } catch { emit(failure(error)) }
case "write":
    do {
        try coordinatedWrite(URL(fileURLWithPath: rest[0]), rest[1])
        emit(["ok": true])
    } catch { emit(failure(error)) }
case "save-document":
    let document = NoteDocument(fileURL: URL(fileURLWithPath: rest[0]))
    document.text = rest[1]
    let saved = waitFor { done in document.save(to: document.fileURL, for: .forCreating, completionHandler: done) }
    let closed = waitFor { done in document.close(completionHandler: done) }
    emit(["ok": .bool(saved && closed)])
case "open-document":
    let document = NoteDocument(fileURL: URL(fileURLWithPath: rest[0]))
    guard waitFor({ done in document.open(completionHandler: done) }) else {
        emit(["ok": false])
        break
    }
    let text = document.text
    _ = waitFor { done in document.close(completionHandler: done) }
    emit(["ok": true, "text": .string(text)])
case "bookmark":
    do {
        let options: URL.BookmarkCreationOptions = rest.contains("--read-only") ? [.withSecurityScope, .securityScopeAllowOnlyReadAccess] : []
        let data = try URL(fileURLWithPath: rest[0]).bookmarkData(options: options, includingResourceValuesForKeys: [.fileSizeKey])
        emit(["ok": true, "data": .string(data.base64EncodedString())])
    } catch { emit(failure(error)) }
case "resolve":
    do {
        guard let data = Data(base64Encoded: rest[0]) else { throw CocoaError(.fileReadCorruptFile) }
        var stale = false
        let url = try URL(resolvingBookmarkData: data, bookmarkDataIsStale: &stale)
        var result: [String: WireValue] = ["ok": true, "path": .string(url.path), "stale": .bool(stale)]
        result["text"] = (try? coordinatedRead(url)).map { .string($0) } ?? .null
        if let text = option("--write", in: rest) {
            do {
                try coordinatedWrite(url, text)
                result["wrote"] = true
            } catch {
                result["wrote"] = false
                result["writeError"] = failure(error)
            }
        }
        emit(.object(result))
    } catch { emit(failure(error)) }
case "values":
    guard let data = Data(base64Encoded: rest[0]),
        let values = URL.resourceValues(forKeys: [.nameKey, .fileSizeKey], fromBookmarkData: data)
    else {
        emit(["ok": false])
        break
    }
    emit(["ok": true, "name": values.name.map { .string($0) } ?? .null, "size": values.fileSize.map { .int(Int64($0)) } ?? .null])
case "ubiquity":
    let url = URL(fileURLWithPath: rest[0])
    do {
        let values = try url.promisedItemResourceValues(forKeys: [
            .isUbiquitousItemKey, .ubiquitousItemDownloadingStatusKey, .ubiquitousItemIsUploadedKey, .ubiquitousItemIsUploadingKey,
            .ubiquitousItemIsDownloadingKey, .ubiquitousItemHasUnresolvedConflictsKey, .ubiquitousItemUploadingErrorKey,
        ])
        func bool(_ value: Bool?) -> WireValue { value.map { .bool($0) } ?? .null }
        emit([
            "ok": true, "ubiquitous": .bool(FileManager.default.isUbiquitousItem(at: url)), "isUbiquitousItem": bool(values.isUbiquitousItem),
            "status": values.ubiquitousItemDownloadingStatus.map { .string($0.rawValue) } ?? .null, "uploaded": bool(values.ubiquitousItemIsUploaded),
            "uploading": bool(values.ubiquitousItemIsUploading), "downloading": bool(values.ubiquitousItemIsDownloading),
            "conflicts": bool(values.ubiquitousItemHasUnresolvedConflicts),
            "uploadError": values.ubiquitousItemUploadingError.map { .string($0.localizedDescription) } ?? .null,
        ])
    } catch { emit(failure(error)) }
case "evict":
    do {
        try FileManager.default.evictUbiquitousItem(at: URL(fileURLWithPath: rest[0]))
        emit(["ok": true])
    } catch { emit(failure(error)) }
case "download":
    do {
        try FileManager.default.startDownloadingUbiquitousItem(at: URL(fileURLWithPath: rest[0]))
        // The download runs on; the helper waits for it to land (a minute at most) to report it.
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: rest[0]), Date() < deadline { usleep(20_000) }
        emit(["ok": true, "downloaded": .bool(FileManager.default.fileExists(atPath: rest[0]))])
    } catch { emit(failure(error)) }
case "publish":
    do {
        var expiration: NSDate?
        let url = try FileManager.default.url(forPublishingUbiquitousItemAt: URL(fileURLWithPath: rest[0]), expiration: &expiration)
        emit(["ok": true, "url": .string(url.absoluteString), "expiration": expiration.map { .double($0.timeIntervalSince1970) } ?? .null])
    } catch { emit(failure(error)) }
case "ubiquitous":
    do {
        try FileManager.default.setUbiquitous(rest[2] == "true", itemAt: URL(fileURLWithPath: rest[0]), destinationURL: URL(fileURLWithPath: rest[1]))
        emit(["ok": true])
    } catch { emit(failure(error)) }
case "query":
    do {
        let query = MetadataQuery()
        query.predicate = try MetadataPredicate(parsing: rest[0])
        query.searchScopes = [NSMetadataQueryUbiquitousDocumentsScope]
        let gathered = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidFinishGathering, object: query, queue: nil) { _ in
            gathered.signal()
        }
        guard query.start() else { throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "the query did not start"]) }
        guard gathered.wait(timeout: .now() + 30) == .success else { throw CocoaError(.fileLocking, userInfo: [NSLocalizedDescriptionKey: "no results in 30 s"]) }
        NotificationCenter.default.removeObserver(observer)
        let items = (query.results as? [MetadataItem]) ?? []
        query.stop()
        emit([
            "ok": true,
            "results": .array(items.map { item in
                [
                    "path": .string(item.value(forAttribute: NSMetadataItemPathKey) as? String ?? ""),
                    "uploaded": (item.value(forAttribute: NSMetadataUbiquitousItemIsUploadedKey) as? Bool).map { .bool($0) } ?? .null,
                ]
            }),
        ])
    } catch { emit(failure(error)) }
case "start":
    let url = URL(fileURLWithPath: rest[0])
    emit(["ok": true, "started": .bool(url.startAccessingSecurityScopedResource())])
case "pick":
    let mode = rest.first ?? ""
    let types = options("--type", in: rest).compactMap { UTType($0) }
    let urls = options("--url", in: rest).map { URL(fileURLWithPath: $0) }
    let picker: DocumentPicker
    switch mode {
    case "open": picker = DocumentPicker(forOpeningContentTypes: types)
    case "import": picker = DocumentPicker(forOpeningContentTypes: types, asCopy: true)
    case "export": picker = DocumentPicker(forExporting: urls, asCopy: true)
    case "move": picker = DocumentPicker(forExporting: urls)
    case "legacy-open": picker = DocumentPicker(documentTypes: types.map(\.identifier), in: .open)
    case "legacy-import": picker = DocumentPicker(documentTypes: types.map(\.identifier), in: .import)
    case "legacy-export": picker = DocumentPicker(urls: urls, in: .exportToService)
    case "legacy-move": picker = DocumentPicker(urls: urls, in: .moveToService)
    default:
        emit(["ok": false, "message": .string("unknown picker mode \(mode)")])
        exit(2)
    }
    picker.allowsMultipleSelection = rest.contains("--multiple")
    picker.directoryURL = option("--folder", in: rest).map { URL(fileURLWithPath: $0) }
    let semaphore = DispatchSemaphore(value: 0)
    let box = Box()
    if rest.contains("--present") {
        // UIKit's shape: present, and hear the outcome through the delegate.
        let delegate = Delegate(box: box, done: semaphore)
        picker.delegate = delegate
        picker.present()
        semaphore.wait()
        withExtendedLifetime(delegate) {}
    } else {
        Task.detached {
            do { box.urls = try await picker.pick() } catch { box.error = error }
            semaphore.signal()
        }
        semaphore.wait()
    }
    if let error = box.error {
        emit(failure(error))
    } else {
        var items: [WireValue] = []
        for url in box.urls {
            var item: [String: WireValue] = ["path": .string(url.path)]
            let started = url.startAccessingSecurityScopedResource()
            item["started"] = .bool(started)
            item["text"] = (try? coordinatedRead(url)).map { .string($0) } ?? .null
            if let text = option("--write", in: rest) {
                item["wrote"] = .bool((try? coordinatedWrite(url, text)) != nil)
            }
            if rest.contains("--bookmark") {
                item["bookmark"] = (try? url.bookmarkData()).map { .string($0.base64EncodedString()) } ?? .null
            }
            if started { url.stopAccessingSecurityScopedResource() }
            items.append(.object(item))
        }
        emit(["ok": true, "urls": .array(items)])
    }
case "container":
    emit([
        "ok": true, "container": AppContainer.current.map { .string($0.url.path) } ?? .null,
        "ubiquity": FileManager.default.url(forUbiquityContainerIdentifier: nil).map { .string($0.path) } ?? .null,
        "home": ProcessInfo.processInfo.environment["HOME"].map { .string($0) } ?? .null,
    ])
case "check":
    do {
        guard let daemon = AccessClient.daemon else { throw CocoaError(.featureUnsupported) }
        let reply = try AccessClient.send(daemon, AccessCheck(path: rest[0], write: rest.contains("--write")))
        emit(["ok": true, "allowed": .bool(reply.allowed), "reason": .string(reply.reason)])
    } catch { emit(failure(error)) }
case "keep-open":
    let document = NoteDocument(fileURL: URL(fileURLWithPath: rest[0]))
    guard waitFor({ done in document.open(completionHandler: done) }) else {
        emit(["ok": false])
        break
    }
    // Told of each state change; a minute at most.
    let closed = DispatchSemaphore(value: 0)
    let observer = NotificationCenter.default.addObserver(forName: Document.stateChangedNotification, object: document, queue: nil) { _ in
        if document.documentState.contains(.closed) { closed.signal() }
    }
    emit(["ok": true, "opened": .string(rest[0])])
    _ = closed.wait(timeout: .now() + 60)
    NotificationCenter.default.removeObserver(observer)
    emit(["closed": .bool(document.documentState.contains(.closed))])
case "present":
    final class PlainPresenter: NSObject, FilePresenter, @unchecked Sendable {
        let presentedItemURL: URL?
        let presentedItemOperationQueue = OperationQueue()
        init(_ url: URL) { presentedItemURL = url }
    }
    let presenter = PlainPresenter(URL(fileURLWithPath: rest[0]))
    FileCoordinator.addFilePresenter(presenter)
    emit(["ok": true, "presenting": .string(rest[0])])
    // Until stdin ends, two minutes at most.
    let ended = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        _ = FileHandle.standardInput.readDataToEndOfFile()
        ended.signal()
    }
    _ = ended.wait(timeout: .now() + 120)
    FileCoordinator.removeFilePresenter(presenter)
case "identity":
    func token() -> WireValue { (FileManager.default.ubiquityIdentityToken as? NSString).map { .string($0 as String) } ?? .null }
    let changed = DispatchSemaphore(value: 0)
    let observer = NotificationCenter.default.addObserver(forName: .NSUbiquityIdentityDidChange, object: nil, queue: nil) { _ in changed.signal() }
    emit(["token": token()])
    for _ in 0..<(Int(rest.first ?? "") ?? 0) {
        guard changed.wait(timeout: .now() + 30) == .success else {
            emit(["ok": false, "message": "no NSUbiquityIdentityDidChange in 30 s"])
            break
        }
        emit(["token": token()])
    }
    NotificationCenter.default.removeObserver(observer)
case "relay":
    relay(to: FolioPaths().socketPath)
case "hold":
    hold(Int(rest.first ?? "") ?? 100, at: FolioPaths().socketPath)
case _ where command.hasPrefix("/"):
    // Started by `folio open` with a document's path.
    do { emit(["ok": true, "opened": .string(command), "text": .string(try coordinatedRead(URL(fileURLWithPath: command)))]) } catch {
        emit(failure(error))
    }
default:
    emit(["ok": false, "message": .string("unknown command \(command)")])
    exit(2)
}

final class Delegate: DocumentPickerDelegate {
    let box: Box
    let done: DispatchSemaphore
    init(box: Box, done: DispatchSemaphore) {
        self.box = box
        self.done = done
    }
    func documentPicker(_ controller: DocumentPicker, didPickDocumentsAt urls: [URL]) {
        box.urls = urls
        done.signal()
    }
    func documentPickerWasCancelled(_ controller: DocumentPicker) {
        box.error = CocoaError(.userCancelled)
        done.signal()
    }
}

/// A plain-text document, as an iOS app subclasses UIDocument.
final class NoteDocument: Document, @unchecked Sendable {
    private let lock = NSLock()
    private var storage = ""

    var text: String {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        text = String(decoding: data, as: UTF8.self)
    }

    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }
}

/// Starts `operation` and waits on the main thread (this helper has nothing else to do), a minute
/// at most, for the success it reports (false when it never reports).
func waitFor(_ operation: (@escaping @Sendable (Bool) -> Void) -> Void) -> Bool {
    let semaphore = DispatchSemaphore(value: 0)
    let box = Box()
    operation { success in
        box.success = success
        semaphore.signal()
    }
    guard semaphore.wait(timeout: .now() + 60) == .success else { return false }
    return box.success
}

final class Box: @unchecked Sendable {
    var success = false
    var urls: [URL] = []
    var error: (any Error)?
}

/// Connects to the daemon's socket at `path` and copies bytes both ways (stdin to the socket, the
/// socket to stdout) until either side ends; then exits.
func relay(to path: String) -> Never {
    // A daemon that closes while a frame is being written must not kill the relay before the
    // replies already read reach stdout.
    signal(SIGPIPE, SIG_IGN)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard UnixSocketAddress.connect(fd, to: path) == 0 else {
        FileHandle.standardError.write(Data("relay: cannot connect to \(path): errno \(errno)\n".utf8))
        exit(3)
    }
    @Sendable func copy(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + offset, count - offset) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
    let upstream = Thread {
        copy(from: 0, to: fd)
        shutdown(fd, Int32(SHUT_WR))
    }
    upstream.start()
    copy(from: fd, to: 1)
    exit(0)
}

/// Opens `count` connections to the daemon's socket at `path`, each sent the start of a frame
/// and nothing more; prints how many it holds, then keeps them until stdin ends.
func hold(_ count: Int, at path: String) -> Never {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    var held: [Int32] = []
    let start = Array(#"{"id":1,"method":"sta"#.utf8)
    for _ in 0..<count {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0, UnixSocketAddress.connect(fd, to: path) == 0 else { break }
        _ = start.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        held.append(fd)
    }
    FileHandle.standardOutput.write(Data("held \(held.count)\n".utf8))
    _ = FileHandle.standardInput.readDataToEndOfFile()
    exit(0)
}

