import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The document browser in a real headless Chromium against a running daemon: every action is
/// done as a person would (clicks, dialogs, keys), and checked on disk and in the page.
@Suite("Browser page", .serialized, .elasticPool, .enabled(if: WebDriver.unavailability == nil, "\(WebDriver.unavailability ?? "")"))
struct BrowserPageTests {
    static func selector(_ path: String) -> String { "li[data-path=\"\(path)\"]" }

    /// A 1×1 red PNG.
    static let redPixel: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
        0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xDE, 0x00, 0x00, 0x00, 0x0C, 0x49, 0x44, 0x41, 0x54, 0x08, 0xD7, 0x63,
        0xF8, 0xCF, 0xC0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xDD, 0x8D, 0xB0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test func renameMoveDuplicateNewFolderTrashAndPutBack() async throws {
        let rig = try BrowserRig("actions") { home in
            for name in ["a.txt", "b.txt", "c.txt"] { try Data("text \(name)".utf8).write(to: URL(fileURLWithPath: home + "/Documents/" + name)) }
        }
        let documents = rig.home + "/Documents"
        try await rig.withPage(path: documents) { page in
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 3", "three items")

            // Rename a.txt through the dialog.
            try await page.click(Self.selector(documents + "/a.txt"))
            try await page.click("#rename")
            try await page.clear("#name-input")
            try await page.type("#name-input", "renamed.txt")
            try await page.click("#name-ok")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the renamed item", arguments: [Self.selector(documents + "/renamed.txt")])
            #expect(exists(documents + "/renamed.txt"))
            #expect(!exists(documents + "/a.txt"))

            // A name that is taken is refused in the dialog, and nothing changes.
            try await page.click(Self.selector(documents + "/b.txt"))
            try await page.click("#rename")
            try await page.clear("#name-input")
            try await page.type("#name-input", "c.txt")
            try await page.click("#name-ok")
            try await page.wait(for: "return document.getElementById('name-error').textContent.includes('exists')", "the refusal in the dialog")
            try await page.click("#name-cancel")
            #expect(try String(contentsOfFile: documents + "/c.txt", encoding: .utf8) == "text c.txt")
            #expect(exists(documents + "/b.txt"))

            // A new folder, then move b.txt into it with the move dialog.
            try await page.click("#new-folder")
            try await page.clear("#name-input")
            try await page.type("#name-input", "Archive")
            try await page.click("#name-ok")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the new folder", arguments: [Self.selector(documents + "/Archive")])
            var isFolder: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: documents + "/Archive", isDirectory: &isFolder) && isFolder.boolValue)
            try await page.click(Self.selector(documents + "/b.txt"))
            try await page.click("#move")
            try await page.wait(for: "return !!document.querySelector('#move-folders button[aria-label=Archive]')", "the folder in the move dialog")
            try await page.click("#move-folders button[aria-label=Archive]")
            try await page.wait(for: "return document.getElementById('move-where').textContent.endsWith('/Archive')", "the chosen folder")
            try await page.click("#move-ok")
            try await page.wait(for: "return !document.querySelector(arguments[0])", "b.txt gone from the list", arguments: [Self.selector(documents + "/b.txt")])
            #expect(exists(documents + "/Archive/b.txt"))
            #expect(!exists(documents + "/b.txt"))

            // Drag renamed.txt onto the Archive folder (the page's drag and drop handlers, fed the events
        // a drag makes: WebDriver cannot drive HTML drag and drop in Chromium).
        try await page.run(
            """
            const source = document.querySelector(arguments[0]), target = document.querySelector(arguments[1]);
            const data = new DataTransfer();
            source.dispatchEvent(new DragEvent('dragstart', {bubbles: true, dataTransfer: data}));
            target.dispatchEvent(new DragEvent('dragover', {bubbles: true, cancelable: true, dataTransfer: data}));
            target.dispatchEvent(new DragEvent('drop', {bubbles: true, cancelable: true, dataTransfer: data}));
            """, [Self.selector(documents + "/renamed.txt"), Self.selector(documents + "/Archive")])
        try await page.wait(for: "return !document.querySelector(arguments[0])", "renamed.txt dragged away", arguments: [Self.selector(documents + "/renamed.txt")])
        #expect(FileManager.default.fileExists(atPath: documents + "/Archive/renamed.txt"))
        #expect(!FileManager.default.fileExists(atPath: documents + "/renamed.txt"))

        // Duplicate c.txt: "c copy.txt", same bytes.
            try await page.click(Self.selector(documents + "/c.txt"))
            try await page.click("#duplicate")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the copy", arguments: [Self.selector(documents + "/c copy.txt")])
            #expect(try String(contentsOfFile: documents + "/c copy.txt", encoding: .utf8) == "text c.txt")

            // Move c.txt to the freedesktop trash (as `gio trash` would), then put it back.
            try await page.click(Self.selector(documents + "/c.txt"))
            try await page.click("#trash")
            try await page.wait(for: "return !document.querySelector(arguments[0])", "c.txt gone from the list", arguments: [Self.selector(documents + "/c.txt")])
            let trash = rig.environment["XDG_DATA_HOME"]! + "/Trash"
            #expect(!exists(documents + "/c.txt"))
            #expect(try String(contentsOfFile: trash + "/files/c.txt", encoding: .utf8) == "text c.txt")
            let info = try String(contentsOfFile: trash + "/info/c.txt.trashinfo", encoding: .utf8)
            #expect(info.hasPrefix("[Trash Info]\nPath=\(documents)/c.txt\nDeletionDate="))
            try await page.click("button[data-view=trash]")
            try await page.wait(for: "return !!document.querySelector('li[data-path=\"trash:c.txt\"]')", "c.txt in the trash view")
            try await page.click("li[data-path=\"trash:c.txt\"]")
            try await page.click("#restore")
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 0", "the trash emptied")
            #expect(try String(contentsOfFile: documents + "/c.txt", encoding: .utf8) == "text c.txt")
            #expect(!exists(trash + "/info/c.txt.trashinfo"))
            #expect(!exists(trash + "/files/c.txt"))
        }
    }

    @Test func searchTagAndFavorite() async throws {
        let rig = try BrowserRig("search") { home in
            for name in ["report 2026.txt", "report draft.md", "holiday.png"] {
                try Data("x".utf8).write(to: URL(fileURLWithPath: home + "/Documents/" + name))
            }
            try Data("Minutes of the meeting. The quarterly figures are in; nobody objected.".utf8).write(to: URL(fileURLWithPath: home + "/Documents/notes.txt"))
        }
        let documents = rig.home + "/Documents"
        try rig.folio(["index", "add", documents])
        try rig.folio(["index", "status", "--wait"])
        try await rig.withPage(path: documents) { page in
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 4", "four items")

            // A word of a document's text finds it, with the passage and the word marked.
            try await page.type("#search", "quarter")
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 1 && !!document.querySelector('li.item .snippet mark')", "the document by its text")
            let passage = try await page.run("return document.querySelector('li.item .snippet').textContent") as? String
            #expect(passage == "Minutes of the meeting. The quarterly figures are in; nobody objected.")
            #expect(try await page.run("return document.querySelector('li.item .snippet mark').textContent") as? String == "quarterly")
            try await BrowserRig.screenshots(of: page, named: "search-content")
            try await page.clear("#search")

            // Search as you type: results live, kind filter.
            try await page.type("#search", "report")
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 2", "two results for report")
            let names = try await page.run("return [...document.querySelectorAll('li.item')].map(e => e.dataset.path).sort()") as? [String]
            #expect(names == [documents + "/report 2026.txt", documents + "/report draft.md"])
            try await page.run("const s = document.getElementById('search-kind'); s.value = 'text'; s.dispatchEvent(new Event('change'))")
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 2", "plain text and markdown are text")
            try await page.clear("#search")
            try await page.type("#search", "holi")
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 0", "no text named holi")
            try await page.run("const s = document.getElementById('search-kind'); s.value = 'image'; s.dispatchEvent(new Event('change'))")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the image", arguments: [Self.selector(documents + "/holiday.png")])

            // Tag it Red and work; the sidebar lists the tags, the file carries them.
            try await page.click(Self.selector(documents + "/holiday.png"))
            try await page.click("#tag")
            try await page.type("#tag-input", "Red, work")
            try await page.click("#tag-ok")
            try await page.wait(for: "return !!document.querySelector('button[data-tag=work]')", "the tag in the sidebar")
            #expect(FileTags.tags(of: URL(fileURLWithPath: documents + "/holiday.png")) == ["Red", "work"])
            try await page.click("button[data-tag=work]")
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 1 && !!document.querySelector(arguments[0])", "the tagged item", arguments: [Self.selector(documents + "/holiday.png")])

            // Favorite it: the Favorites view shows it.
            try await page.click(Self.selector(documents + "/holiday.png"))
            try await page.click("#favorite")
            try await page.wait(for: "return document.getElementById('favorite').getAttribute('aria-pressed') === 'true'", "the favorite pressed")
            try await page.click("button[data-view=favorites]")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the favorite listed", arguments: [Self.selector(documents + "/holiday.png")])
            let favorites = try rig.folio(["favorites", "list"])
            #expect(favorites.stdout.contains(documents + "/holiday.png"))
        }
    }

    @Test func changesFromElsewhereAppearWithoutReload() async throws {
        let rig = try BrowserRig("live")
        let documents = rig.home + "/Documents"
        try await rig.withPage(path: documents) { page in
            try await page.run("window.folioMarker = 1")
            // An uncoordinated write by another program, in a folder the index does not hold.
            try Data("new".utf8).write(to: URL(fileURLWithPath: documents + "/from elsewhere.txt"))
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the new file", arguments: [Self.selector(documents + "/from elsewhere.txt")])
            // And in an indexed folder, a rename by another program.
            try rig.folio(["index", "add", documents])
            try FileManager.default.moveItem(atPath: documents + "/from elsewhere.txt", toPath: documents + "/moved.txt")
            try await page.wait(for: "return !!document.querySelector(arguments[0])", "the renamed file", arguments: [Self.selector(documents + "/moved.txt")])
            // The same page all along: nothing reloaded it.
            #expect(try await page.run("return window.folioMarker") as? Int == 1)
        }
    }

    @Test func everyControlHasAnAccessibleNameAndRole() async throws {
        let rig = try BrowserRig("a11y") { home in try Data("x".utf8).write(to: URL(fileURLWithPath: home + "/Documents/a.txt")) }
        try await rig.withPage(path: rig.home + "/Documents") { page in
            let expected: [(String, String, String)] = [
                ("#search", "Search", "searchbox"), ("#rename", "Rename", "button"), ("#trash", "Move to Trash", "button"),
                ("#new-folder", "New folder", "button"), ("#sort", "Sort by", "combobox"), ("#items", "Items", "listbox"),
                ("button[data-view=recents]", "Recents", "button"), ("button[data-view=trash]", "Trash", "button"),
            ]
            for (css, label, role) in expected {
                let found = try await page.accessibility(css)
                #expect(found.label == label, "\(css)")
                #expect(found.role == role, "\(css)")
            }
            let item = try await page.accessibility(Self.selector(rig.home + "/Documents/a.txt"))
            #expect(item.role == "option")
            #expect(item.label.hasPrefix("a.txt"))
            // Every button, input and select has a name.
            let unnamed = try await page.run(
                "return [...document.querySelectorAll('button, input, select')].filter(e => !e.closest('dialog') && !(e.getAttribute('aria-label') || e.labels?.length)).map(e => e.outerHTML)"
            ) as? [String]
            #expect(unnamed == [])
            // Keyboard: arrows select, F2 renames.
            try await page.click("#items")
            try await page.press("\u{E015}")  // ArrowDown
            try await page.wait(for: "return document.querySelector('li.item').getAttribute('aria-selected') === 'true'", "the first item selected")
            try await page.press("\u{E032}")  // F2
            try await page.wait(for: "return document.getElementById('name-dialog').open", "the rename dialog")
        }
    }

    @Test func screenshotsAtPhoneAndDesktopWidths() async throws {
        let rig = try BrowserRig("shots") { home in
            for index in 1...12 { try Data(repeating: 65, count: index * 700).write(to: URL(fileURLWithPath: home + "/Documents/Document \(index).txt")) }
            try FileManager.default.createDirectory(atPath: home + "/Documents/Projects", withIntermediateDirectories: true)
            try Data(Self.redPixel).write(to: URL(fileURLWithPath: home + "/Documents/Red.png"))
        }
        try await rig.withPage(path: rig.home + "/Documents") { page in
            try await page.wait(for: "return document.querySelectorAll('li.item').length === 14", "fourteen items")
            try await BrowserRig.screenshots(of: page, named: "browser")
            // The grid shows the image's thumbnail, made by the machine's thumbnailer through the daemon.
            try await page.click("#view")
            try await page.wait(
                for: "const img = document.querySelector(arguments[0] + ' img.thumbnail'); return !!img && img.complete && img.naturalWidth > 0",
                "the thumbnail drawn", arguments: [Self.selector(rig.home + "/Documents/Red.png")], seconds: 30)
            try await page.screenshot(to: BrowserRig.screenshots + "/browser-grid-1280.png")
        }
    }
}
