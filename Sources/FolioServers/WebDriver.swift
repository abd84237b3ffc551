public import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Debian's `chromedriver` as a real process on loopback, with one headless Chromium session,
/// spoken to over the W3C WebDriver HTTP API with AsyncHTTPClient (no Python, no selenium): for the
/// browser page's tests and `folio bench web`.
public final class WebDriver: @unchecked Sendable {
    private let port: Int
    private let http = HTTPClient(eventLoopGroupProvider: .singleton)
    /// The WebDriver session's id.
    public private(set) var session = ""
    private let directory: TemporaryDirectory

    /// Why the browser tests cannot run here, or nil.
    public static var unavailability: String? {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (scripts/test installs chromium and chromium-driver)"
        }
        return nil
    }

    /// Starts chromedriver and a Chromium session with a window `width` × `height`.
    public init(width: Int = 1280, height: Int = 800) async throws {
        directory = try TemporaryDirectory("chromium")
        var chosen = 0
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try LoopbackHTTP.freePort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/chromedriver")
            process.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1", "--log-path=\(directory.path)/chromedriver.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do {
                try process.runWithNoSignalBlocked()
                let deadline = Date().addingTimeInterval(20)
                while !LoopbackHTTP.isListening(port) {
                    guard process.isRunning, Date() < deadline else { throw BrowserError("chromedriver did not listen on \(port)") }
                    try await Task.sleep(for: .milliseconds(50))
                }
                chosen = port
                processes.append(process)
                break
            } catch {
                lastError = error
                process.terminate()
            }
        }
        guard chosen != 0 else { throw lastError ?? BrowserError("chromedriver did not start") }
        port = chosen
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": "/usr/bin/chromium",
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=\(width),\(height)",
                            "--user-data-dir=\(directory.path)/profile", "--no-first-run", "--disable-extensions",
                        ],
                    ],
                    "goog:loggingPrefs": ["browser": "ALL"],
                ]
            ]
        ]
        let created = try await send("POST", "/session", capabilities, timeout: 60)
        guard let id = (created as? [String: Any])?["sessionId"] as? String else { throw BrowserError("no WebDriver session: \(String(describing: created))") }
        session = id
    }

    private var processes: [Process] = []

    /// Ends the session and stops chromedriver, and any Chromium process of this session's
    /// profile that outlived it.
    public func quit() async {
        if !session.isEmpty { _ = try? await send("DELETE", "/session/\(session)", nil, timeout: 20) }
        session = ""
        // The session's end closed Chromium; chromedriver ignores SIGTERM for seconds, and holds
        // nothing worth a clean exit.
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for leftover in TestServer.processes(mentioning: directory.path) { kill(leftover, SIGKILL) }
        try? await http.shutdown()
    }

    // MARK: Commands

    @discardableResult
    public func command(_ method: String, _ path: String, _ body: Any? = nil) async throws -> Any? {
        try await send(method, "/session/\(session)" + path, method == "POST" ? (body ?? [String: Any]()) : nil, timeout: 30)
    }

    public func go(_ url: String) async throws { try await command("POST", "/url", ["url": url]) }

    /// Runs `script` in the page and returns its value.
    @discardableResult
    public func run(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await command("POST", "/execute/sync", ["script": script, "args": arguments])
    }

    /// The first element matching `css`.
    public func element(_ css: String) async throws -> String {
        let found = try await command("POST", "/element", ["using": "css selector", "value": css])
        guard let reference = (found as? [String: Any])?.values.first as? String else { throw BrowserError("no element \(css)") }
        return reference
    }

    /// Clicks the element; found again if the page re-rendered it in between (a live update
    /// replaces the list's rows).
    public func click(_ css: String) async throws {
        for attempt in 1...10 {
            let id = try await element(css)
            do {
                try await command("POST", "/element/\(id)/click")
                return
            } catch let error as BrowserError where error.description.contains("stale element") && attempt < 10 {
                try await Task.sleep(for: .milliseconds(20))
                continue
            }
        }
    }

    /// Types `text` into the element (keys such as Enter as their WebDriver code points).
    public func type(_ css: String, _ text: String) async throws {
        let id = try await element(css)
        try await command("POST", "/element/\(id)/value", ["text": text])
    }

    public func clear(_ css: String) async throws {
        let id = try await element(css)
        try await command("POST", "/element/\(id)/clear")
    }

    /// The accessible name and role Chromium computes for the element.
    public func accessibility(_ css: String) async throws -> (label: String, role: String) {
        let id = try await element(css)
        let label = try await command("GET", "/element/\(id)/computedlabel") as? String ?? ""
        let role = try await command("GET", "/element/\(id)/computedrole") as? String ?? ""
        return (label, role)
    }

    /// Presses keys on the focused element (WebDriver's key actions).
    public func press(_ keys: String) async throws {
        var actions: [[String: Any]] = []
        for key in keys.unicodeScalars {
            actions.append(["type": "keyDown", "value": String(key)])
            actions.append(["type": "keyUp", "value": String(key)])
        }
        try await command("POST", "/actions", ["actions": [["type": "key", "id": "keyboard", "actions": actions]]])
    }

    public func setWindow(width: Int, height: Int) async throws {
        try await command("POST", "/window/rect", ["width": width, "height": height])
    }

    /// A PNG of the viewport, written to `path`.
    public func screenshot(to path: String) async throws {
        guard let text = try await command("GET", "/screenshot") as? String, let data = Data(base64Encoded: text) else {
            throw BrowserError("no screenshot")
        }
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// What the page wrote to its console (errors first of all).
    public func consoleLog() async -> String {
        let entries = (try? await command("POST", "/se/log", ["type": "browser"])) as? [[String: Any]] ?? []
        return entries.map { "\($0["level"] ?? "?"): \($0["message"] ?? "")" }.joined(separator: "\n")
    }

    /// Waits until `script` returns true in the page (a positive event), or fails at the deadline
    /// with what the page showed.
    public func wait(for script: String, _ what: String, arguments: [Any] = [], seconds: Double = 15) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let value = try await run(script, arguments) as? Bool, value { return }
            guard Date() < deadline else {
                let status = (try? await run(
                    "return [document.getElementById('status')?.textContent ?? '', ...[...document.querySelectorAll('.error')].map(e => e.textContent).filter(t => t)].join(' | ')"
                )) as? String ?? ""
                throw BrowserError("waited \(seconds) s for \(what); status: \(status); console: \(await consoleLog())")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    // MARK: HTTP

    private func send(_ method: String, _ path: String, _ body: Any?, timeout: Int64) async throws -> Any? {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
        request.method = HTTPMethod(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: [UInt8](try JSONSerialization.data(withJSONObject: body))))
        }
        let response = try await http.execute(request, timeout: .seconds(timeout))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        let object = try JSONSerialization.jsonObject(with: Data(bytes.readableBytesView), options: [.fragmentsAllowed])
        let value = (object as? [String: Any])?["value"]
        if response.status.code >= 400 {
            let error = (value as? [String: Any]).map { "\($0["error"] ?? "?"): \($0["message"] ?? "")" } ?? "\(response.status)"
            throw BrowserError("WebDriver \(method) \(path): \(error)")
        }
        return value
    }
}

/// A browser run's failure, with what the browser or the page said.
public struct BrowserError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
