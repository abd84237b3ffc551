import Folio
import FolioTestTraits
import FolioWire
import Foundation
import Testing

/// "No handler uses a client's path but through what resolving it opened" holds by module
/// visibility: every request an app may send carries its paths as `ClientPath`, whose text is
/// internal to the `Folio` module, so a handler in `FolioDaemon` can only resolve it (once), show it
/// in a message, or hand it where paths are compared as text (`comparedAsText`), and these tests
/// keep it that way.
@Suite("Client paths reach handlers only as ClientPath", .elasticPool)
struct ClientPathUseTests {
    static let marker = "/client-path-marker/named-by-the-app"

    /// Every stored value of `value`, through structs, optionals and arrays.
    static func strings(in value: Any) -> [String] {
        if let text = value as? String { return [text] }
        if value is ClientPath { return [] }
        return Mirror(reflecting: value).children.flatMap { strings(in: $0.value) }
    }

    /// Each request an app may send that names a path, decoded from a frame naming the marker,
    /// holds it only as a `ClientPath`: no member is a `String` with the path in it.
    @Test func requestsAnAppMaySendCarryNoPathAsText() throws {
        let path = WireValue.string(Self.marker)
        let decoded: [(String, Any)] = [
            ("claim", try SubmitClaim(params: ["purpose": "p", "items": [["path": path, "access": "read", "options": 0]]])),
            ("moved", try Moved(params: ["claim": 1, "from": path, "to": path])),
            ("presenter.add", try PresenterAdd(params: ["presenter": 1, "purpose": "p", "path": path])),
            ("presenter.update", try PresenterUpdate(params: ["presenter": 1, "path": path])),
            ("ubiquity.changed", try UbiquityChanged(params: ["path": path, "keys": []])),
            ("types.of", try TypesOf(params: ["path": path])),
            ("item", try ItemFacts(params: ["path": path])),
            ("recents.add", try RecentsAdd(params: ["path": path, "event": "opened"])),
            ("query.start", try QueryStart(params: ["query": 1, "predicate": "TRUEPREDICATE", "scopes": [path]])),
            ("search", try Search(params: ["text": "x", "folders": [path]])),
            ("access.check", try AccessCheck(params: ["path": path])),
            ("bookmark.create", try BookmarkCreate(params: ["path": path])),
            ("picker.pick", try PickerRequest(params: ["mode": "export", "urls": [path]])),
            ("drive.evict", try DriveEvictRequest(params: ["path": path])),
            ("drive.publish", try DrivePublishRequest(params: ["path": path])),
        ]
        for (method, request) in decoded {
            let texts = Self.strings(in: request).filter { $0.contains("client-path-marker") }
            #expect(texts.isEmpty, "\(method) keeps the app's path as text: \(texts)")
            #expect(String(describing: request).contains("client-path-marker"), "\(method) lost the path")
        }
    }

    /// In the daemon, the path's text is taken out (`comparedAsText`) only where paths are compared
    /// as text and never opened: the access service's answer for the user's own tools, and the
    /// coordination table's (a `moved` notice's source, a claim's placement by the drive's prefix).
    @Test func theDaemonTakesThePathsTextOnlyWhereItIsComparedAsText() throws {
        var root = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) { root.deleteLastPathComponent() }
        let daemon = root.appendingPathComponent("Sources/FolioDaemon")
        var uses: [String: Int] = [:]
        let files = FileManager.default.enumerator(atPath: daemon.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        #expect(files.count > 50)
        for file in files {
            let text = try String(contentsOf: daemon.appendingPathComponent(file), encoding: .utf8)
            let count = text.components(separatedBy: ".comparedAsText").count - 1
            if count > 0 { uses[(file as NSString).lastPathComponent] = count }
        }
        #expect(uses == ["AccessService.swift": 1, "ClientSession+Coordination.swift": 2], "\(uses)")
    }
}
