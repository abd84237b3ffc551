import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The document picker in the browser page: a real app process calls `pick()` (the stand-in app,
/// `FolioAppHelper`), the open page shows the request, and a person's choice in Chromium answers
/// the app, in each mode.
@Suite("Picker page", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct PickerPageTests {
    static func selector(_ path: String) -> String { BrowserPageTests.selector(path) }

    private static func rig(_ name: String) throws -> BrowserRig {
        try BrowserRig(name, withApp: true) { home in
            try Data("the letter".utf8).write(to: URL(fileURLWithPath: home + "/Documents/letter.txt"))
            try Data("second".utf8).write(to: URL(fileURLWithPath: home + "/Documents/second.txt"))
            try Data([0x89, 0x50, 0x4E, 0x47]).write(to: URL(fileURLWithPath: home + "/Documents/photo.png"))
        }
    }

    /// Waits for the picker's bar with `text` in it.
    private static func waitForPicker(_ page: WebDriver, _ text: String) async throws {
        try await page.wait(
            for: "return !document.getElementById('picker-bar').hidden && document.getElementById('picker-text').textContent.includes(arguments[0])",
            "the picker showing \(text)", arguments: [text])
    }

    @Test func openGrantsTheChosenDocumentInPlace() async throws {
        let rig = try Self.rig("pick-open")
        let documents = rig.home + "/Documents"
        try await rig.withPage(path: documents) { page in
            let app = try rig.startApp(["pick", "open", "--type", "public.plain-text"])
            try await Self.waitForPicker(page, "Writer wants to open a document")
            // The image is not a requested type: shown, but not choosable.
            try await page.wait(for: "return document.querySelector(arguments[0])?.getAttribute('aria-disabled') === 'true'", "the image greyed", arguments: [Self.selector(documents + "/photo.png")])
            let open = try await page.accessibility("#picker-choose")
            #expect(open.label == "Open" && open.role == "button")
            try await page.click(Self.selector(documents + "/letter.txt"))
            try await page.click("#picker-choose")
            let answer = try await app.finish()
            #expect(answer["ok"] == true, "\(answer)")
            let url = answer["urls"]?.arrayValue?.first
            #expect(url?["path"]?.stringValue == documents + "/letter.txt")
            #expect(url?["text"]?.stringValue == "the letter")
            #expect(url?["started"] == true)
            try await page.wait(for: "return document.getElementById('picker-bar').hidden", "the picker gone")
        }
    }

    @Test func importGivesACopyInTheAppsContainer() async throws {
        let rig = try Self.rig("pick-import")
        let documents = rig.home + "/Documents"
        try await rig.withPage(path: documents) { page in
            let app = try rig.startApp(["pick", "import", "--type", "public.plain-text", "--multiple"])
            try await Self.waitForPicker(page, "Writer wants a copy of documents")
            try await page.click(Self.selector(documents + "/letter.txt"))
            try await page.run("document.querySelector(arguments[0]).dispatchEvent(new MouseEvent('click', {bubbles: true, ctrlKey: true}))", [Self.selector(documents + "/second.txt")])
            try await page.click("#picker-choose")
            let answer = try await app.finish()
            #expect(answer["ok"] == true, "\(answer)")
            let urls = answer["urls"]?.arrayValue ?? []
            #expect(urls.count == 2)
            for url in urls {
                #expect(url["path"]?.stringValue?.hasPrefix(rig.container + "/tmp/Imports/") == true, "\(url)")
            }
            #expect(Set(urls.compactMap { $0["text"]?.stringValue }) == ["the letter", "second"])
            #expect(FileManager.default.fileExists(atPath: documents + "/letter.txt"))
        }
    }

    @Test func exportAndMoveIntoTheChosenFolder() async throws {
        let rig = try Self.rig("pick-export")
        let documents = rig.home + "/Documents"
        try FileManager.default.createDirectory(atPath: documents + "/Outbox", withIntermediateDirectories: true)
        try await rig.withPage(path: documents) { page in
            // The app's own documents, in its container.
            let own = rig.container + "/Documents"
            try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
            try Data("exported".utf8).write(to: URL(fileURLWithPath: own + "/report.txt"))
            try Data("moved".utf8).write(to: URL(fileURLWithPath: own + "/draft.txt"))

            let export = try rig.startApp(["pick", "export", "--url", own + "/report.txt"])
            try await Self.waitForPicker(page, "Writer wants to export “report.txt”")
            #expect(try await page.accessibility("#picker-choose").label == "Export Here")
            try await page.run("document.querySelector(arguments[0]).dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))", [Self.selector(documents + "/Outbox")])
            try await page.wait(for: "return document.querySelector('#crumbs [aria-current=page]')?.textContent === 'Outbox'", "the Outbox folder")
            try await page.click("#picker-choose")
            let exported = try await export.finish()
            #expect(exported["ok"] == true, "\(exported)")
            #expect(exported["urls"]?.arrayValue?.first?["path"]?.stringValue == documents + "/Outbox/report.txt")
            #expect(FileManager.default.contents(atPath: documents + "/Outbox/report.txt") == Data("exported".utf8))
            #expect(FileManager.default.fileExists(atPath: own + "/report.txt"))

            let move = try rig.startApp(["pick", "move", "--url", own + "/draft.txt"])
            try await Self.waitForPicker(page, "Writer wants to move “draft.txt”")
            try await page.click("#picker-choose")
            let moved = try await move.finish()
            #expect(moved["ok"] == true, "\(moved)")
            #expect(FileManager.default.contents(atPath: documents + "/Outbox/draft.txt") == Data("moved".utf8))
            #expect(!FileManager.default.fileExists(atPath: own + "/draft.txt"))
        }
    }

    @Test func cancelAndClosingTheTabCancel() async throws {
        let rig = try Self.rig("pick-cancel")
        let documents = rig.home + "/Documents"
        try await rig.withPage(path: documents) { page in
            let first = try rig.startApp(["pick", "open"])
            try await Self.waitForPicker(page, "Writer wants to open a document")
            try await page.click("#picker-cancel")
            let cancelled = try await first.finish()
            #expect(cancelled["ok"] == false)
            #expect(cancelled["code"]?.intValue == Int64(CocoaError.userCancelled.rawValue), "\(cancelled)")

            let second = try rig.startApp(["pick", "open"])
            try await Self.waitForPicker(page, "Writer wants to open a document")
            try await page.go("about:blank")
            let closed = try await second.finish(within: 30)
            #expect(closed["code"]?.intValue == Int64(CocoaError.userCancelled.rawValue), "\(closed)")
        }
        // No page open: the app hears at once that no picker is showing.
        let rig2 = try Self.rig("pick-none")
        defer { Task { await rig2.stop() } }
        let lonely = try await rig2.startApp(["pick", "open"]).finish()
        #expect(lonely["ok"] == false)
        #expect(lonely["message"]?.stringValue?.contains("folio browse") == true, "\(lonely)")
    }

    @Test func withNoPageOpenThePickerOpensOne() async throws {
        // The user's browser: `xdg-open` as the daemon finds it, writing down what it was handed.
        let bin = try TemporaryDirectory("web-pick-xdg")
        let recorded = bin.path + "/opened"
        let opener = try bin.write("xdg-open", "#!/bin/sh\necho \"$1\" > '\(recorded).part' && mv '\(recorded).part' '\(recorded)'\n")
        #expect(chmod(opener.path, 0o755) == 0)
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let rig = try BrowserRig("pick-launch", withApp: true, extraEnvironment: ["DISPLAY": ":9", "PATH": path]) { home in
            try Data("the letter".utf8).write(to: URL(fileURLWithPath: home + "/Documents/letter.txt"))
        }
        defer { Task { await rig.stop() } }
        let app = try rig.startApp(["pick", "open", "--type", "public.plain-text"])
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: recorded), Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        // The browser was handed a file only the user can read, which leads on to the page.
        let handed = try String(contentsOfFile: recorded, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!handed.contains(rig.token))
        let launcher = try String(contentsOfFile: try #require(URL(string: handed)).path, encoding: .utf8)
        let start = try #require(launcher.range(of: "url=")), end = try #require(launcher.range(of: "\">", range: start.upperBound..<launcher.endIndex))
        let address = launcher[start.upperBound..<end.lowerBound].replacingOccurrences(of: "&amp;", with: "&")
        #expect(address == "http://127.0.0.1:\(rig.port)/?token=\(rig.token)")
        // The new tab shows the request; the choice answers the app.
        let browser = try await WebDriver()
        do {
            try await browser.go(address)
            try await Self.waitForPicker(browser, "Writer wants to open a document")
            // It starts at home: into Documents.
            try await browser.wait(for: "return !!document.querySelector(arguments[0])", "the Documents folder", arguments: [Self.selector(rig.home + "/Documents")])
            try await browser.run("document.querySelector(arguments[0]).dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))", [Self.selector(rig.home + "/Documents")])
            try await browser.wait(for: "return !!document.querySelector(arguments[0])", "the letter", arguments: [Self.selector(rig.home + "/Documents/letter.txt")])
            try await browser.click(Self.selector(rig.home + "/Documents/letter.txt"))
            try await browser.click("#picker-choose")
            let answer = try await app.finish()
            #expect(answer["urls"]?.arrayValue?.first?["text"]?.stringValue == "the letter", "\(answer)")
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
    }

    @Test func screenshotsOfThePicker() async throws {
        let rig = try Self.rig("pick-shots")
        let documents = rig.home + "/Documents"
        try await rig.withPage(path: documents) { page in
            let app = try rig.startApp(["pick", "open", "--type", "public.plain-text"])
            try await Self.waitForPicker(page, "Writer wants to open a document")
            try await BrowserRig.screenshots(of: page, named: "picker")
            try await page.click("#picker-cancel")
            _ = try await app.finish()
        }
    }
}

/// App access in the browser page: the grants each app holds, and revoking one.
@Suite("Grants page", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct GrantsPageTests {
    @Test func revokingAGrantEndsTheAppsAccess() async throws {
        let rig = try BrowserRig("grants", withApp: true) { home in
            try Data("the letter".utf8).write(to: URL(fileURLWithPath: home + "/Documents/letter.txt"))
        }
        let letter = rig.home + "/Documents/letter.txt"
        let added = try rig.folio(["grants", "add", "--app", BrowserRig.app, letter])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try await rig.startApp(["read", letter]).finish()["ok"] == true)
        try await rig.withPage(path: rig.home + "/Documents") { page in
            try await page.click("button[data-view=grants]")
            try await page.wait(for: "return document.querySelectorAll('#grants button.revoke').length === 1", "the grant listed")
            let text = try await page.run("return document.querySelector('#grants .what').textContent") as? String
            #expect(text?.hasPrefix("Writer: ~/Documents/letter.txt (read only, kept") == true, "\(text ?? "")")
            let revoke = try await page.accessibility("#grants button.revoke")
            #expect(revoke.role == "button" && revoke.label == "Revoke Writer's access to ~/Documents/letter.txt")
            try await page.click("#grants button.revoke")
            try await page.wait(for: "return document.querySelectorAll('#grants button.revoke').length === 0", "the grant gone")
            let listed = try rig.folio(["grants", "list", "--json"])
            #expect(!listed.stdout.contains("letter.txt"), "\(listed.stdout)")
            let refused = try await rig.startApp(["read", letter]).finish()
            #expect(refused["ok"] == false)
            #expect(refused["posix"]?.intValue == Int64(EACCES), "\(refused)")
        }
    }
}

/// Apps whose ubiquity container is public show its Documents folder in the sidebar.
@Suite("Sidebar", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct SidebarTests {
    @Test func aPublicAppContainerIsAPlace() async throws {
        let rig = try BrowserRig("sidebar", withApp: true)
        let documents = FolioPaths(environment: rig.environment).driveDirectory + "/iCloud.\(BrowserRig.app)/Documents"
        try FileManager.default.createDirectory(atPath: documents, withIntermediateDirectories: true)
        try Data("in the app's folder".utf8).write(to: URL(fileURLWithPath: documents + "/story.txt"))
        try await rig.withPage(path: rig.home + "/Documents") { page in
            let place = try await page.accessibility("button.place[data-path=\"\(documents)\"]")
            #expect(place.label == "Writer Files" && place.role == "button")
            try await page.click("button.place[data-path=\"\(documents)\"]")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the app's document", arguments: [BrowserPageTests.selector(documents + "/story.txt")])
        }
    }
}

/// Open with: the apps that open a document, the default, and opening it in one.
@Suite("Open with", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct OpenWithTests {
    @Test func openingADocumentInItsApp() async throws {
        let scratch = try TemporaryDirectory("web-open-app")
        let opened = scratch.path + "/opened.txt"
        // The app: a script that writes down what it was handed.
        let script = scratch.path + "/writer.sh"
        try Data("#!/bin/sh\necho \"$@\" > '\(opened).part' && mv '\(opened).part' '\(opened)'\n".utf8).write(to: URL(fileURLWithPath: script))
        #expect(chmod(script, 0o755) == 0)
        let rig = try BrowserRig("open") { home in
            try Data("a letter".utf8).write(to: URL(fileURLWithPath: home + "/Documents/letter.txt"))
        }
        // A desktop application associated with plain text: offered to open it, not made the
        // default here (that is the desktop's mimeapps.list).
        let applications = rig.environment["XDG_DATA_HOME"]! + "/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try Data("[Desktop Entry]\nType=Application\nName=Desktop Pad\nExec=/bin/true %f\nMimeType=text/plain;\n".utf8)
            .write(to: URL(fileURLWithPath: applications + "/org.example.Pad.desktop"))
        try Data("[MIME Cache]\ntext/plain=org.example.Pad.desktop;\n".utf8).write(to: URL(fileURLWithPath: applications + "/mimeinfo.cache"))
        // Another app claims plain text first, so it is the default until the user chooses.
        let editor = try scratch.write(
            "editor.json",
            """
            {"CFBundleIdentifier": "com.example.Editor", "CFBundleName": "Editor", "CFBundleExecutable": "/bin/true",
             "CFBundleDocumentTypes": [{"CFBundleTypeName": "Text", "LSItemContentTypes": ["public.plain-text"], "LSHandlerRank": "Alternate"}]}
            """)
        #expect(try rig.folio(["app", "register", editor.path]).status == 0)
        let manifest = try scratch.write(
            "writer.json",
            """
            {"CFBundleIdentifier": "com.example.Notes", "CFBundleName": "Notes", "LSSupportsOpeningDocumentsInPlace": true,
             "CFBundleExecutable": "\(script)",
             "CFBundleDocumentTypes": [{"CFBundleTypeName": "Text", "LSItemContentTypes": ["public.plain-text"], "LSHandlerRank": "Alternate"}]}
            """)
        #expect(try rig.folio(["app", "register", manifest.path]).status == 0)
        let letter = rig.home + "/Documents/letter.txt"
        try await rig.withPage(path: rig.home + "/Documents") { page in
            try await page.click(BrowserPageTests.selector(letter))
            try await page.click("#open-with")
            try await page.wait(for: "return !!document.querySelector('#open-apps li[data-app=\"com.example.Notes\"] button.open-in')", "Notes offered")
            try await page.wait(for: "return document.getElementById('open-type').textContent.includes('Opens in Editor by default')", "Editor the default")
            try await page.wait(
                for: "const pad = document.querySelector('#open-apps li[data-app=\"org.example.Pad.desktop\"]'); return !!pad && !!pad.querySelector('button.open-in') && !pad.querySelector('button.make-default')",
                "the desktop application offered to open, not as the default")
            try await BrowserRig.screenshots(of: page, named: "open-with")
            try await page.click("#open-apps li[data-app=\"com.example.Notes\"] button.make-default")
            try await page.wait(for: "return document.getElementById('open-type').textContent.includes('Opens in Notes by default')", "Notes the default")
            try await page.click("#open-close")
            // A double click opens it in the default app, in place (the app may write it: a grant).
            try await page.run("document.querySelector(arguments[0]).dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))", [BrowserPageTests.selector(letter)])
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: opened), Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect((try? String(contentsOfFile: opened, encoding: .utf8)) == letter + "\n")
            let grants = try rig.folio(["grants", "list", "--app", "com.example.Notes"])
            #expect(grants.stdout.contains("letter.txt"), "\(grants.stdout)")
        }
    }
}

/// New documents from the user's Templates folder and from the templates apps ship.
@Suite("New document", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct NewDocumentTests {
    @Test func fromTheUsersAndAnAppsTemplates() async throws {
        let scratch = try TemporaryDirectory("web-templates")
        let invoice = try scratch.write("Invoice.md", "# Invoice\n")
        let rig = try BrowserRig("new") { home in
            try FileManager.default.createDirectory(atPath: home + "/Templates", withIntermediateDirectories: true)
            try Data("Dear …".utf8).write(to: URL(fileURLWithPath: home + "/Templates/Letter.txt"))
        }
        let manifest = try scratch.write(
            "billing.json",
            """
            {"CFBundleIdentifier": "com.example.Billing", "CFBundleName": "Billing", "FolioDocumentTemplates": ["\(invoice.path)"]}
            """)
        #expect(try rig.folio(["app", "register", manifest.path]).status == 0)
        let documents = rig.home + "/Documents"
        try await rig.withPage(path: documents) { page in
            try await page.click("#new-document")
            try await page.wait(for: "return document.querySelectorAll('#new-templates button.create').length === 2", "two templates")
            let labels = try await page.run("return [...document.querySelectorAll('#new-templates button.create')].map(b => b.getAttribute('aria-label'))") as? [String]
            #expect(labels == ["New Letter", "New Invoice (Billing)"])
            try await page.click("#new-templates button[aria-label=\"New Letter\"]")
            // The copy is made, then named at once.
            try await page.wait(for: "return document.getElementById('name-dialog').open", "the name dialog")
            try await page.clear("#name-input")
            try await page.type("#name-input", "To Ann.txt")
            try await page.click("#name-ok")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the new letter", arguments: [BrowserPageTests.selector(documents + "/To Ann.txt")])
            #expect(FileManager.default.contents(atPath: documents + "/To Ann.txt") == Data("Dear …".utf8))
            try await page.click("#new-document")
            try await page.wait(for: "return document.querySelectorAll('#new-templates button.create').length === 2", "two templates again")
            try await page.click("#new-templates button[aria-label=\"New Invoice (Billing)\"]")
            try await page.wait(for: "return document.getElementById('name-dialog').open", "the name dialog")
            try await page.click("#name-cancel")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the invoice", arguments: [BrowserPageTests.selector(documents + "/Invoice.md")])
            #expect(FileManager.default.contents(atPath: documents + "/Invoice.md") == Data("# Invoice\n".utf8))
            // Only a listed template is copied.
            let refused = try LoopbackHTTP.request(
                port: rig.port, method: "POST", path: "/api/new",
                headers: ["Cookie": "folio-\(rig.port)=\(rig.token)", "Origin": "http://127.0.0.1:\(rig.port)", "Content-Type": "application/json"],
                body: Data(#"{"folder": "\#(documents)", "template": "/etc/passwd"}"#.utf8))
            #expect(refused.status == 404)
            #expect(!FileManager.default.fileExists(atPath: documents + "/passwd"))
        }
    }
}
