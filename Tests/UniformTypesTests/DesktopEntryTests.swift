import Foundation
import FolioSystem
import FolioTesting
import FolioTestTraits
import Testing
@testable import UniformTypes

/// Desktop entries as the Desktop Entry Specification and `gio open` read them: the `Exec` line's
/// quoting and field codes, lookup by desktop entry id, and the associations that stand in when
/// no default is set.
@Suite("Desktop entries", .elasticPool)
struct DesktopEntryTests {
    static func entry(_ text: String, id: String = "x.desktop") -> DesktopEntry? {
        DesktopEntry(id: id, path: "/apps/" + id, bytes: Array(text.utf8))
    }

    @Test func execLinesAreSplitAndExpandedAsTheSpecSays() throws {
        let viewer = try #require(Self.entry("""
            [Desktop Entry]
            Type=Application
            Name=Viewer
            Name[de]=Betrachter
            Icon=viewer
            Exec="/bin/sh" -c "echo \\\\"\\\\$1\\\\" \\\\\\\\ 100%%" sh --file=%f %i %c %k %d
            """))
        #expect(viewer.name == "Viewer")
        let command = try #require(viewer.command(opening: ["/home/a b/x.txt"], path: "/usr/bin:/bin"))
        #expect(command == ["/bin/sh", "-c", "echo \"$1\" \\ 100%", "sh", "--file=/home/a b/x.txt", "--icon", "viewer", "Viewer", "/apps/x.desktop"])

        // %U and %u give file:// URLs; a line without a file code gets the file appended, as GLib does.
        let lister = try #require(Self.entry("[Desktop Entry]\nType=Application\nName=L\nExec=ls %U\n"))
        #expect(lister.command(opening: ["/tmp/a b"], path: "/usr/bin:/bin") == ["/usr/bin/ls", "file:///tmp/a%20b"])
        let plain = try #require(Self.entry("[Desktop Entry]\nType=Application\nName=P\nExec=cat\\s-n\n"))
        #expect(plain.command(opening: ["/tmp/f"], path: "/usr/bin:/bin") == ["/usr/bin/cat", "-n", "/tmp/f"])
        // A program that is not installed: no command.
        let missing = try #require(Self.entry("[Desktop Entry]\nType=Application\nName=M\nExec=no-such-program-folio %f\n"))
        #expect(missing.command(opening: ["/tmp/f"], path: "/usr/bin:/bin") == nil)
    }

    @Test func entriesThatCannotBeStartedAreRefused() {
        #expect(Self.entry("[Desktop Entry]\nType=Link\nName=L\nExec=ls\n") == nil)
        #expect(Self.entry("[Desktop Entry]\nType=Application\nName=H\nHidden=true\nExec=ls\n") == nil)
        #expect(Self.entry("[Desktop Entry]\nType=Application\nName=T\nTryExec=no-such-program-folio\nExec=ls\n") == nil)
        #expect(Self.entry("[Desktop Entry]\nType=Application\nName=Q\nExec=\"unterminated\n") == nil)
        #expect(Self.entry("[Desktop Entry]\nType=Application\nName=R\nExec=bin/relative %f\n") == nil)
        #expect(Self.entry("[Other Group]\nType=Application\nName=O\nExec=ls\n") == nil)
        #expect(Self.entry("[Desktop Entry]\nType=Application\nExec=ls\n") == nil, "no name")
    }

    @Test func entriesAreFoundByIdAndAssociationsStandInForDefaults() throws {
        let dir = try TemporaryDirectory("desktop-entries")
        let entry = "[Desktop Entry]\nType=Application\nName=%@\nExec=cat %f\n"
        // The user's folder before the system's; `vendor-app.desktop` also as `vendor/app.desktop`.
        try dir.write("data/applications/editor.desktop", entry.replacingOccurrences(of: "%@", with: "Mine"))
        try dir.write("system/applications/editor.desktop", entry.replacingOccurrences(of: "%@", with: "System"))
        try dir.write("system/applications/vendor/app.desktop", entry.replacingOccurrences(of: "%@", with: "Vendor"))
        try dir.write("system/applications/viewer.desktop", entry.replacingOccurrences(of: "%@", with: "Viewer"))
        try dir.write("system/applications/removed.desktop", entry.replacingOccurrences(of: "%@", with: "Removed"))
        try dir.write("system/applications/mimeinfo.cache", "[MIME Cache]\ntext/markdown=removed.desktop;viewer.desktop;\ntext/plain=editor.desktop;\n")
        try dir.write("config/mimeapps.list", "[Added Associations]\ntext/markdown=vendor-app.desktop;\n[Removed Associations]\ntext/markdown=removed.desktop;\n")
        var environment = dir.xdgEnvironment()
        environment["XDG_DATA_DIRS"] = dir.path + "/system"
        let paths = FolioPaths(environment: environment)
        #expect(DesktopEntry.find("editor.desktop", paths: paths)?.name == "Mine")
        #expect(DesktopEntry.find("vendor-app.desktop", paths: paths)?.name == "Vendor")
        #expect(DesktopEntry.find("../editor.desktop", paths: paths) == nil)
        #expect(DesktopEntry.find("absent.desktop", paths: paths) == nil)

        let handlers = HandlerRegistry(types: TypeRegistry(configuration: .init(mimeDirectories: [])), paths: paths, desktops: [])
        let markdown = try #require(UTType("net.daringfireball.markdown"))
        // No default, no Folio app: the added association, then the installed ones, never the removed one.
        #expect(handlers.desktopCandidates(for: markdown).map(\.entry.id) == ["vendor-app.desktop", "viewer.desktop", "editor.desktop"])
        let choice = try #require(handlers.choice(for: markdown))
        #expect(choice.handler == .desktopEntry("vendor-app.desktop") && choice.reason == .desktopAssociation)
        // A default for a type it conforms to is the user's word: it wins over associations.
        try dir.write("config/mimeapps.list", "[Default Applications]\ntext/plain=viewer.desktop\n")
        let withDefault = HandlerRegistry(types: TypeRegistry(configuration: .init(mimeDirectories: [])), paths: paths, desktops: [])
        #expect(withDefault.choice(for: markdown)?.handler == .desktopEntry("viewer.desktop"))
        #expect(withDefault.choice(for: markdown)?.reason == .mimeappsDefault)
    }
}
