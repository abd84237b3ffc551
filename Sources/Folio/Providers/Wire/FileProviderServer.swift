#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Foundation

/// Serves a ``FileProvider`` over the provider protocol (docs/provider-protocol.md) on standard input
/// and output, so that a provider written in Swift runs as an out-of-process provider: the daemon
/// starts the executable, and the executable calls ``run()``.
///
/// Requests run concurrently; `cancel` cancels the request's task. Logs go to standard error.
public final class FileProviderServer: @unchecked Sendable {
    private let provider: any FileProvider
    private let input: Int32
    private let output: Int32
    private let lock = NSLock()
    private var tasks: [Int64: Task<Void, Never>] = [:]
    private var progresses: [Int64: Progress] = [:]
    private var temporaryDirectory: URL?

    /// A server of `provider` on standard input and output (or the descriptors given).
    public init(provider: any FileProvider, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.provider = provider
        self.input = input
        self.output = output
    }

    /// Serves requests until standard input ends.
    public func run() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread { [self] in
                readLoop()
                done.resume()
            }
            thread.start()
        }
    }

    private func readLoop() {
        var reader = FrameLineReader(descriptor: input, limit: ProviderWire.maximumLine)
        while true {
            let line: ArraySlice<UInt8>
            do {
                guard let next = try reader.next() else { return }
                line = next
            } catch {
                send(["id": .null, "error": ProviderWire.encode(CocoaError(.fileReadTooLarge))])
                return
            }
            if line.isEmpty { continue }
            guard let frame = try? WireValue(parsing: line), let method = frame["method"]?.stringValue else {
                send(["id": .null, "error": ["domain": "folio.provider-protocol", "code": 1, "message": "not a frame"]])
                continue
            }
            let params = frame["params"] ?? [:]
            if method == "hello", let id = frame["id"]?.intValue {
                // Answered before the next line is read, so no request can overtake it.
                do {
                    send(["id": .int(id), "result": try hello(params)])
                } catch {
                    send(["id": .int(id), "error": ProviderWire.encode(error)])
                }
                continue
            }
            guard let id = frame["id"]?.intValue else {
                // Notifications: only `cancel`.
                if method == "cancel", let target = params["id"]?.intValue { cancel(target) }
                continue
            }
            let task = Task { [self] in
                let reply: WireValue
                do {
                    reply = ["id": .int(id), "result": try await handle(method, params, id: id)]
                } catch {
                    reply = ["id": .int(id), "error": ProviderWire.encode(error)]
                }
                lock.withLock {
                    tasks[id] = nil
                    progresses[id] = nil
                }
                send(reply)
            }
            lock.withLock { tasks[id] = task }
        }
    }

    private func cancel(_ id: Int64) {
        let (task, progress) = lock.withLock { (tasks[id], progresses[id]) }
        progress?.cancel()
        task?.cancel()
    }

    private func send(_ frame: WireValue) {
        var bytes = frame.serialized()
        bytes.append(UInt8(ascii: "\n"))
        lock.withLock {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    private func request() throws -> FileProviderRequest {
        guard let directory = lock.withLock({ temporaryDirectory }) else { throw ProviderWireError("say hello first") }
        return FileProviderRequest(temporaryDirectory: directory)
    }

    /// A progress for request `id`; ``report(_:of:)`` sends its movement to the host.
    private func progress(for id: Int64) -> Progress {
        let progress = Progress(totalUnitCount: 0)
        lock.withLock { progresses[id] = progress }
        return progress
    }

    private func handle(_ method: String, _ params: WireValue, id: Int64) async throws -> WireValue {
        switch method {
        case "item":
            return ["item": ProviderWire.encode(try await provider.item(for: try ProviderWire.identifier(params["identifier"], "identifier"), request: try request()))]
        case "enumerateItems":
            let page: FileProviderPage
            do {
                page = try ProviderWire.page(params["page"]) ?? .initialPageSortedByName
            } catch {
                throw FileProviderError(.pageExpired, message: "\(error)")
            }
            let found = try await provider.enumerateItems(
                in: try ProviderWire.identifier(params["container"], "container"), startingAt: page, request: try request())
            return ["items": .array(found.items.map(ProviderWire.encode)), "nextPage": found.nextPage.map { ProviderWire.encode($0.rawValue) } ?? .null]
        case "currentSyncAnchor":
            let anchor = try await provider.currentSyncAnchor(for: try ProviderWire.identifier(params["container"], "container"), request: try request())
            return ["anchor": ProviderWire.encode(anchor.rawValue)]
        case "enumerateChanges":
            let anchor: FileProviderSyncAnchor
            do {
                anchor = try ProviderWire.anchor(params["anchor"])
            } catch {
                throw FileProviderError(.syncAnchorExpired, message: "\(error)")
            }
            let batch = try await provider.enumerateChanges(
                in: try ProviderWire.identifier(params["container"], "container"), from: anchor, request: try request())
            return [
                "updated": .array(batch.updatedItems.map(ProviderWire.encode)),
                "deleted": .array(batch.deletedItemIdentifiers.map { .string($0.rawValue) }), "anchor": ProviderWire.encode(batch.anchor.rawValue),
                "moreComing": .bool(batch.moreComing),
            ]
        case "fetchContents":
            let version = params["version"].flatMap { $0 == .null ? nil : $0 }
            let progress = progress(for: id)
            let reporter = report(progress, of: id)
            defer { reporter.cancel() }
            let (url, item) = try await provider.fetchContents(
                for: try ProviderWire.identifier(params["identifier"], "identifier"),
                version: try version.map { try ProviderWire.version($0, "version") }, request: try request(), progress: progress)
            reporter.cancel()
            // The last movement goes out before the reply, on the same pipe.
            send(["method": "progress", "params": ["id": .int(id), "completed": .int(progress.completedUnitCount), "total": .int(progress.totalUnitCount)]])
            return ["path": .string(url.path), "item": ProviderWire.encode(item)]
        case "createItem":
            let result = try await provider.createItem(
                basedOn: try ProviderWire.item(params["template"], "template"),
                fields: FileProviderItemFields(rawValue: try ProviderWire.bits(params["fields"], "fields")), contents: try contents(params),
                options: FileProviderCreateItemOptions(rawValue: try ProviderWire.bits(params["options"], "options")), request: try request())
            return encode(result)
        case "modifyItem":
            let result = try await provider.modifyItem(
                try ProviderWire.item(params["item"]), baseVersion: try ProviderWire.version(params["baseVersion"], "baseVersion"),
                changedFields: FileProviderItemFields(rawValue: try ProviderWire.bits(params["changedFields"], "changedFields")),
                contents: try contents(params),
                options: FileProviderModifyItemOptions(rawValue: try ProviderWire.bits(params["options"], "options")), request: try request())
            return encode(result)
        case "deleteItem":
            try await provider.deleteItem(
                identifier: try ProviderWire.identifier(params["identifier"], "identifier"),
                baseVersion: try ProviderWire.version(params["baseVersion"], "baseVersion"),
                options: FileProviderDeleteItemOptions(rawValue: try ProviderWire.bits(params["options"], "options")), request: try request())
            return [:]
        default:
            throw ProviderWireError("unknown method “\(method)”")
        }
    }

    private func hello(_ params: WireValue) throws -> WireValue {
        guard params["protocol"]?.intValue == ProviderWire.protocolVersion else {
            throw ProviderWireError("this provider speaks protocol \(ProviderWire.protocolVersion)")
        }
        let directory = try ProviderWire.string(params["temporaryDirectory"], "temporaryDirectory")
        lock.withLock { temporaryDirectory = URL(fileURLWithPath: directory) }
        return ["protocol": .int(ProviderWire.protocolVersion), "name": .string(String(describing: type(of: provider)))]
    }

    /// Reports `progress` of request `id` to the host every 200 ms while it moves, until `task` ends.
    private func report(_ progress: Progress, of id: Int64) -> Task<Void, Never> {
        Task { [self] in
            var last: (Int64, Int64) = (-1, -1)
            while !Task.isCancelled {
                let now = (progress.completedUnitCount, progress.totalUnitCount)
                if now != last {
                    send(["method": "progress", "params": ["id": .int(id), "completed": .int(now.0), "total": .int(now.1)]])
                    last = now
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    private func contents(_ params: WireValue) throws -> URL? {
        guard let value = params["contents"], value != .null else { return nil }
        return URL(fileURLWithPath: try ProviderWire.string(value, "contents"))
    }

    private func encode(_ result: FileProviderItemResult) -> WireValue {
        [
            "item": result.item.map(ProviderWire.encode) ?? .null, "pendingFields": .int(Int64(result.stillPendingFields.rawValue)),
            "shouldFetchContent": .bool(result.shouldFetchContent),
        ]
    }
}
