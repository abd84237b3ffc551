import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The page's files (`Web/Static`: HTML, CSS, JavaScript modules; nothing from elsewhere), read
/// once from the package's resources and served from memory.
enum WebAssets {
    /// The files by name, with their content types.
    static let files: [String: (type: String, bytes: ByteBuffer)] = load()

    static let contentTypes = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "svg": "image/svg+xml", "json": "application/json; charset=utf-8",
    ]

    static func addRoutes(to router: Router<WebRequestContext>, state: WebState) {
        router.get("/") { _, _ in serve("index.html") }
        router.get("static/{name}") { _, context in serve(context.parameters.get("name") ?? "") }
    }

    private static func serve(_ name: String) -> Response {
        guard let file = files[name] else {
            return files.isEmpty
                ? WebJSON.error(.internalServerError, "the page's files are missing from this installation (Folio_FolioDaemon.resources)")
                : WebJSON.error(.notFound, "no such file")
        }
        return Response(status: .ok, headers: [.contentType: file.type], body: ResponseBody(byteBuffer: file.bytes))
    }

    /// Finds the resources folder without `Bundle.module`, which stops the process when it is
    /// missing: beside the executable (an installed `folio`), then where the build put it.
    private static func load() -> [String: (type: String, bytes: ByteBuffer)] {
        let bundleName = "Folio_FolioDaemon.resources"
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates = [executable.appendingPathComponent(bundleName).path, Bundle.main.bundlePath + "/" + bundleName]
        // Tests run inside the build folder's .xctest bundle; the resources sit beside it.
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(bundleName).path)
        if let override = ProcessInfo.processInfo.environment["FOLIO_WEB_RESOURCES"] { candidates.insert(override, at: 0) }
        for candidate in candidates {
            let folder = candidate + "/Static"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            var files: [String: (String, ByteBuffer)] = [:]
            for name in names {
                guard let type = contentTypes[(name as NSString).pathExtension], let data = FileManager.default.contents(atPath: folder + "/" + name) else {
                    continue
                }
                files[name] = (type, ByteBuffer(bytes: data))
            }
            if !files.isEmpty { return files }
        }
        return [:]
    }
}
