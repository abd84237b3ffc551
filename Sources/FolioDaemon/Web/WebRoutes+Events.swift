import Folio
import Foundation
import Hummingbird
import NIOCore

extension WebRoutes {
    /// `GET /api/events`: server-sent events. Each `folders` event names the folders whose items
    /// changed (``WebChanges``: whatever reached the index, and folders outside it that a page
    /// listed), at most one every 100 ms; the page reloads what it shows of them. A comment every
    /// 5 s finds a closed page; the stream ends when the daemon stops.
    static func addEventRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("events") { _, _ in
            let folders = state.changes.subscribe()
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                    try await stream(folders, to: &writer)
                    try await writer.finish(nil)
                })
        }
    }

    /// Writes each event: changed folders gathered over 100 ms, the picker's changes at once, and
    /// a comment every 5 s, which finds a closed page (and so a picker closed with its tab).
    private static func stream(_ events: AsyncStream<WebEvent>, to writer: inout any ResponseBodyWriter) async throws {
        let ticks = AsyncStream<WebEvent?> { continuation in
            let pump = Task {
                for await event in events { continuation.yield(event) }
                continuation.finish()
            }
            let heartbeat = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(5))
                    continuation.yield(nil)
                }
            }
            continuation.onTermination = { _ in
                pump.cancel()
                heartbeat.cancel()
            }
        }
        var pending = Set<String>()
        var lastSent = ContinuousClock.now - .seconds(1)
        for await event in ticks {
            switch event {
            case nil:
                if pending.isEmpty { try await writer.write(ByteBuffer(string: ": still here\n\n")) }
                continue
            case .picker?:
                try await writer.write(ByteBuffer(string: "event: picker\ndata: {}\n\n"))
                continue
            case .progress(let downloads)?:
                let data = try JSONEncoder().encode(["downloads": downloads])
                try await writer.write(ByteBuffer(string: "event: progress\ndata: " + String(decoding: data, as: UTF8.self) + "\n\n"))
                continue
            case .downloadFailed(let path, let message)?:
                let data = try JSONEncoder().encode(["path": path, "error": message])
                try await writer.write(ByteBuffer(string: "event: download-failed\ndata: " + String(decoding: data, as: UTF8.self) + "\n\n"))
                continue
            case .folders(let folders)?:
                pending.formUnion(folders)
            }
            let waited = ContinuousClock.now - lastSent
            if waited < .milliseconds(100) { try? await Task.sleep(for: .milliseconds(100) - waited) }
            let data = try JSONEncoder().encode(["folders": pending.sorted()])
            pending.removeAll()
            lastSent = .now
            try await writer.write(ByteBuffer(string: "event: folders\ndata: " + String(decoding: data, as: UTF8.self) + "\n\n"))
        }
    }
}
