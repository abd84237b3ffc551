import Folio
import FolioServers
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench web`: the browser page in a real headless Chromium against a release daemon. The
/// first screen of a folder of `folderEntries` files (from navigation to the first listing drawn,
/// the page's own `performance.mark`), and search as you type at `indexed` indexed files (from each
/// keystroke to its results drawn), each beside the daemon's own time for the same request (its
/// `Server-Timing`, as Chromium's Performance API reports it) and a raw baseline: `readdir` and
/// `lstat` of the whole folder, and `find -name` over the tree.
enum WebBenchmarks {
    static func run(folderEntries: Int, indexed: Int, rounds: Int) async throws {
        if let missing = WebDriver.unavailability { throw BrowserError("folio bench web needs Chromium: \(missing)") }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-bench-web-\(getpid())").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }

        let folder = root + "/big"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = Date()
        for number in 0..<folderEntries {
            let descriptor = open(folder + "/item \(number).txt", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            close(descriptor)
        }
        let tree = root + "/tree"
        BenchmarkTree.generate(tree, files: max(0, indexed - folderEntries))
        print("web: a folder of \(folderEntries) files and a tree of \(max(0, indexed - folderEntries)), made in \(String(format: "%.1f", Date().timeIntervalSince(made))) s")

        // The page over names: no text extraction running beside it.
        let daemon = try BenchmarkDaemon(root: root + "/daemon", environment: ["FOLIO_INDEX_CONTENT": "off"])
        defer { daemon.stop() }
        let engine = try DaemonCoordinationEngine(socketPath: daemon.socket, app: nil)
        defer { engine.disconnect() }
        let started = Date()
        _ = try await engine.send(IndexAdd(path: folder))
        _ = try await engine.send(IndexAdd(path: tree))
        var status = try await engine.send(IndexStatus())
        while status["state"]?.stringValue != "idle" {
            try await Task.sleep(for: .milliseconds(50))
            status = try await engine.send(IndexStatus())
        }
        let items = status["items"]?.intValue ?? 0
        print("web: \(items) items indexed in \(String(format: "%.1f", Date().timeIntervalSince(started))) s")

        let page = try webPage(daemon.environment["XDG_RUNTIME_DIR"]! + "/folio/web.json")
        let browser = try await WebDriver(width: 1280, height: 900)
        do {
            try await measure(browser, page: page, folder: folder, tree: tree, items: items, rounds: rounds)
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
    }

    private static func measure(_ browser: WebDriver, page: (port: Int, token: String), folder: String, tree: String, items: Int64, rounds: Int) async throws {
        let base = "http://127.0.0.1:\(page.port)/"
        let encoded = folder.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-._~"))) ?? folder
        try await browser.go(base + "?token=\(page.token)")
        try await browser.wait(for: "return performance.getEntriesByName('folio-first-screen').length > 0", "the page")

        // First screen: a fresh load of the page at the folder, `rounds` times.
        var screens: [Double] = [], listings: [Double] = [], daemonListings: [Double] = []
        for _ in 0..<rounds {
            try await browser.go(base + "?path=" + encoded)
            try await browser.wait(for: "return performance.getEntriesByName('folio-first-screen').length > 0", "the first screen", seconds: 60)
            let figures = try await browser.run(
                """
                const list = performance.getEntriesByType('resource').filter(e => e.name.includes('/api/list')).pop();
                return [performance.getEntriesByName('folio-first-screen')[0].startTime, list.duration, (list.serverTiming.find(t => t.name === 'daemon') || {}).duration ?? -1,
                        document.querySelectorAll('li.item').length];
                """) as? [Double] ?? []
            guard figures.count == 4, figures[3] > 0 else { throw BrowserError("the page showed no items: \(figures)") }
            screens.append(figures[0])
            listings.append(figures[1])
            daemonListings.append(figures[2])
        }
        let readdir = (0..<rounds).map { _ in
            milliseconds {
                var count = 0
                _ = DirectoryScanner().list(folder, visit: { _ in count += 1 }, skipped: { _, _ in })
            }
        }
        print(
            "first screen of a \(folderEntries(folder))-entry folder in Chromium: \(format(median(screens))) ms p50 (its listing request \(format(median(listings))) ms in Chromium, \(format(median(daemonListings))) ms in the daemon) | baseline readdir+lstat of the whole folder: \(format(median(readdir))) ms | \(String(format: "%.2f", median(screens) / median(readdir)))× the baseline's time"
        )

        // Search as you type: each keystroke of ten 4-hex-digit names, from the key to its results drawn.
        try await browser.go(base + "?path=" + (tree.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-._~"))) ?? tree))
        try await browser.wait(for: "return performance.getEntriesByName('folio-first-screen').length > 0", "the tree")
        let all = try await searchFigures(browser, base: base, tree: tree, needles: 10)
        print(
            "search as you type at \(items) indexed files in Chromium: \(format(percentile(all.page, 0.5))) ms p50, \(format(percentile(all.page, 0.9))) ms p90 (its request in the daemon \(format(percentile(all.daemon, 0.5))) ms p50) | baseline find -name over the tree: \(format(median(all.find))) ms | \(String(format: "%.3f", percentile(all.page, 0.5) / median(all.find)))× the baseline's time"
        )
    }

    /// Types `needles` random names a key at a time and returns each keystroke's time to results
    /// (the page's), the daemon's time for each search request, and `find -name` for three of them.
    private static func searchFigures(_ browser: WebDriver, base: String, tree: String, needles: Int) async throws -> (page: [Double], daemon: [Double], find: [Double]) {
        var generator = SystemRandomNumberGenerator()
        var page: [Double] = [], daemon: [Double] = [], find: [Double] = []
        for round in 0..<needles {
            let needle = String(format: "%04x", Int.random(in: 0..<0xFFFF, using: &generator))
            try await browser.clear("#search")
            try await browser.run("window.folioSearchTimings = []; performance.clearResourceTimings()")
            var text = ""
            for character in needle {
                text.append(character)
                try await browser.type("#search", String(character))
                try await browser.wait(for: "return (window.folioSearchTimings || []).some(t => t.query === arguments[0])", "the results for \(text)", arguments: [text], seconds: 30)
            }
            let figures = try await browser.run(
                """
                return [window.folioSearchTimings.map(t => t.ms),
                        performance.getEntriesByType('resource').filter(e => e.name.includes('/api/search')).map(e => (e.serverTiming.find(t => t.name === 'daemon') || {}).duration ?? -1)];
                """) as? [[Double]] ?? []
            guard figures.count == 2 else { throw BrowserError("no search timings") }
            page += figures[0]
            daemon += figures[1].filter { $0 >= 0 }
            if round < 3 { find.append(milliseconds { BenchmarkTree.runQuietly(["/usr/bin/find", tree, "-name", "*\(needle)*"]) }) }
        }
        return (page, daemon, find)
    }

    private static func webPage(_ file: String) throws -> (port: Int, token: String) {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let data = FileManager.default.contents(atPath: file), let value = try? WireValue(parsing: Array(data)),
                let port = value["port"]?.intValue, let token = value["token"]?.stringValue
            {
                return (Int(port), token)
            }
            usleep(20_000)
        }
        throw BrowserError("the daemon wrote no \(file)")
    }

    private static func folderEntries(_ folder: String) -> Int {
        var count = 0
        _ = DirectoryScanner().list(folder, visit: { _ in count += 1 }, skipped: { _, _ in })
        return count
    }

    private static func milliseconds(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    private static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

    private static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}
