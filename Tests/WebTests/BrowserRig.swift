import Folio
import FolioTesting
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A real daemon with a private XDG tree and home folder, its page's address and token from
/// `web.json`, and (for the end-to-end tests) a headless Chromium on the page.
final class BrowserRig: @unchecked Sendable {
    let directory: TemporaryDirectory
    let environment: [String: String]
    let daemon: DaemonProcess
    let home: String
    let port: Int
    let token: String
    private(set) var browser: WebDriver?

    /// The app registered by `withApp` (the stand-in app, `FolioAppHelper`).
    static let app = "com.example.Writer"

    /// Starts the daemon; `prepare` fills the home folder first. With `withApp`, the stand-in app
    /// is registered as `BrowserRig.app` (named Writer, opening plain text in place).
    init(_ name: String, withApp: Bool = false, extraEnvironment: [String: String] = [:], prepare: (String) throws -> Void = { _ in }) throws {
        directory = try TemporaryDirectory("web-\(name)")
        environment = directory.xdgEnvironment().merging(extraEnvironment) { $1 }
        home = environment["HOME"]!
        try FileManager.default.createDirectory(atPath: home + "/Documents", withIntermediateDirectories: true)
        try prepare(home)
        if withApp {
            let manifest = try directory.write(
                "writer.json",
                """
                {"CFBundleIdentifier": "\(Self.app)", "CFBundleName": "Writer", "LSSupportsOpeningDocumentsInPlace": true,
                 "CFBundleExecutable": "\(ProcessRunner.builtExecutable("FolioAppHelper").path)",
                 "NSUbiquitousContainers": {"iCloud.\(Self.app)": {"NSUbiquitousContainerIsDocumentScopePublic": true, "NSUbiquitousContainerName": "Writer Files"}},
                 "CFBundleDocumentTypes": [{"CFBundleTypeName": "Text", "LSItemContentTypes": ["public.plain-text"], "LSHandlerRank": "Owner"}]}
                """)
            let registered = try ProcessRunner.folio(["app", "register", manifest.path], environment: environment)
            guard registered.status == 0 else { throw BrowserError("register the app: \(registered.stderr)") }
        }
        daemon = try DaemonProcess(environment: environment)
        _ = try daemon.waitForListening()
        let file = environment["XDG_RUNTIME_DIR"]! + "/folio/web.json"
        let deadline = Date().addingTimeInterval(20)
        var page: [String: Any]?
        while page == nil {
            if let data = FileManager.default.contents(atPath: file) { page = try JSONSerialization.jsonObject(with: data) as? [String: Any] }
            guard page != nil || Date() < deadline else { throw BrowserError("no web.json after 20 s; log: \(daemon.log.suffix(2000))") }
            if page == nil { usleep(20_000) }
        }
        port = page?["port"] as? Int ?? 0
        token = page?["token"] as? String ?? ""
    }

    /// The first address: with the token, which becomes the cookie.
    func address(path: String? = nil) -> String {
        var url = "http://127.0.0.1:\(port)/?token=\(token)"
        if let path { url += "&path=" + (path.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-._~"))) ?? "") }
        return url
    }

    /// Opens the page in Chromium at `path` and waits until it listed it.
    func open(path: String? = nil, width: Int = 1280, height: Int = 800) async throws -> WebDriver {
        let browser = try await WebDriver(width: width, height: height)
        self.browser = browser
        try await browser.go(address(path: path))
        try await browser.wait(for: "return document.getElementById('status').textContent.length > 0", "the page's first listing")
        return browser
    }

    /// Runs `folio` with this daemon's environment.
    @discardableResult
    func folio(_ arguments: [String]) throws -> ProcessRunner.Output {
        try ProcessRunner.run(ProcessRunner.folioExecutable(), arguments, environment: environment)
    }

    /// Runs `body` with the page open at `path`, then stops the browser and the daemon, whether
    /// `body` succeeded or not.
    func withPage(path: String? = nil, width: Int = 1280, height: Int = 800, _ body: (WebDriver) async throws -> Void) async throws {
        do {
            let page = try await open(path: path, width: width, height: height)
            try await body(page)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    /// Starts the stand-in app's `arguments` (a `pick …` command) as `BrowserRig.app`, in the
    /// background; `finish` waits for its JSON line.
    func startApp(_ arguments: [String]) throws -> AppRun {
        var env = environment
        env["FOLIO_COORDINATION"] = "daemon"
        env["FOLIO_APP_ID"] = Self.app
        return try AppRun(arguments: arguments, environment: env)
    }

    /// The app's container.
    var container: String { AppContainer(appIdentifier: Self.app, paths: FolioPaths(environment: environment)).url.path }

    func stop() async {
        await browser?.quit()
        daemon.stop()
    }

    /// Screenshots of the page as it is, at a phone's width (390 px) and a desktop's (1280 px):
    /// `.build/screenshots/<name>-<width>.png`. The window is left at the desktop's width. Each
    /// must hold a picture (more than 5 kB).
    static func screenshots(of page: WebDriver, named name: String) async throws {
        for width in [390, 1280] {
            try await page.setWindow(width: width, height: 844)
            try await page.wait(for: "return window.innerWidth <= arguments[0] && window.innerWidth > arguments[0] - 40", "the window at \(width)", arguments: [width])
            let file = screenshots + "/\(name)-\(width).png"
            try await page.screenshot(to: file)
            let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
            guard size > 5000 else { throw BrowserError("the screenshot \(file) holds \(size) bytes") }
        }
    }

    /// Where screenshots go: `.build/screenshots`, kept after the run to be looked at.
    static var screenshots: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.path + "/.build/screenshots"
    }
}

/// The stand-in app running in the background until it prints its JSON line and exits.
final class AppRun: @unchecked Sendable {
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()

    init(arguments: [String], environment: [String: String]) throws {
        process.executableURL = ProcessRunner.builtExecutable("FolioAppHelper")
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Waits (at most `seconds`) for the app to exit, and returns its last line as JSON.
    func finish(within seconds: Double = 20) async throws -> WireValue {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                process.terminate()
                throw BrowserError("the app did not finish within \(seconds) s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard let line = text.split(separator: "\n").last, let value = try? WireValue(parsing: Array(line.utf8)) else {
            let problems = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw BrowserError("the app printed no JSON (status \(process.terminationStatus)): \(text) \(problems)")
        }
        return value
    }

    deinit { if process.isRunning { process.terminate() } }
}
