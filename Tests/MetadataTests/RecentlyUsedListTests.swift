@testable import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// A list as GTK writes it: a document opened by gedit, one by two apps, a web page (not a file).
let gtkRecents = """
    <?xml version="1.0" encoding="UTF-8"?>
    <xbel version="1.0"
          xmlns:bookmark="http://www.freedesktop.org/standards/desktop-bookmarks"
          xmlns:mime="http://www.freedesktop.org/standards/shared-mime-info"
    >
      <bookmark href="file:///home/u/Documents/Caf%C3%A9%20notes.txt" added="2026-11-20T10:00:00.123456Z" modified="2026-11-21T09:30:00Z" visited="2026-11-21T09:30:00.5Z">
        <info>
          <metadata owner="http://freedesktop.org">
            <mime:mime-type type="text/plain"/>
            <bookmark:applications>
              <bookmark:application name="gedit" exec="&apos;gedit %u&apos;" modified="2026-11-21T09:30:00Z" count="2"/>
            </bookmark:applications>
          </metadata>
        </info>
      </bookmark>
      <bookmark href="file:///home/u/a&amp;b.odt" added="2026-11-19T08:00:00Z" modified="2026-11-19T08:00:00Z" visited="2026-11-19T08:00:00Z">
        <info><metadata owner="http://freedesktop.org"><bookmark:applications>
          <bookmark:application name="LibreOffice" exec="soffice %u" modified="2026-11-19T08:00:00Z" count="1"/>
          <bookmark:application name="Evince" exec="evince %u" modified="2026-11-22T01:00:00Z" count="1"/>
        </bookmark:applications></metadata></info>
      </bookmark>
      <!-- web pages are not files -->
      <bookmark href="https://example.com/page" added="2026-11-22T00:00:00Z"/>
    </xbel>
    """

@Suite("GTK's recently-used.xbel", .elasticPool)
struct RecentlyUsedListTests {
    @Test func readsFilesNewestFirstWithTheirLastApplication() throws {
        let list = try RecentlyUsedList(bytes: Array(gtkRecents.utf8))
        #expect(list.entries.map(\.path) == ["/home/u/a&b.odt", "/home/u/Documents/Café notes.txt"])
        #expect(list.entries.map(\.application) == ["Evince", "gedit"])
        let formatter = ISO8601DateFormatter()
        #expect(list.entries[0].date == formatter.date(from: "2026-11-22T01:00:00Z"))
        #expect(abs(list.entries[1].date.timeIntervalSince(formatter.date(from: "2026-11-21T09:30:00Z")!) - 0.5) < 0.001)
    }

    @Test(arguments: [
        ("<xbel><bookmark href=\"file:///a\" added=\"2026-11-20T10:00:00Z\"", "unterminated tag"),
        ("<xbel><bookmark href=\"file:///a added=\"2026-11-20T10:00:00Z\"/>", "expected = after"),
        ("<xbel><bookmark href='file:///a&bogus;' added=\"2026-11-20T10:00:00Z\"/>", "unknown entity"),
        ("<xbel><bookmark href='file:///a&#0;' added=\"2026-11-20T10:00:00Z\"/>", "unknown entity"),
        ("<xbel><bookmark href=file:///a/>", "expected a quoted value"),
        ("<xbel><!-- never closed", "unterminated markup"),
        ("<xbel></bookmark href='x'>", "attributes in a closing tag"),
        ("<xbel><bookmark href='\u{FF}", "unterminated value"),
    ])
    func malformedListsAreRefusedWhole(_ text: String, _ reason: String) {
        #expect {
            _ = try RecentlyUsedList(bytes: Array(text.utf8))
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func oddButHarmlessEntriesAreLeftOut() throws {
        let text = """
            <xbel>
            <bookmark href="file://otherhost/etc/passwd" added="2026-11-20T10:00:00Z"/>
            <bookmark href="file:///nul%00byte" added="2026-11-20T10:00:00Z"/>
            <bookmark href="file:///no-date"/>
            <bookmark href="file:///bad-date" added="2026-13-40T99:00:00Z"/>
            <bookmark href="file://localhost/ok.txt" added="2026-11-20T10:00:00Z"/>
            </xbel>
            """
        let list = try RecentlyUsedList(bytes: Array(text.utf8))
        #expect(list.entries.map(\.path) == ["/ok.txt"])
        #expect(throws: RecentlyUsedList.Failure.self) { try RecentlyUsedList(bytes: [UInt8](repeating: 32, count: RecentlyUsedList.maximumBytes + 1)) }
    }

    /// The bookmarks of `bytes` as a real XML parser (Python's) reads them: href → (mime type,
    /// application name → count).
    static func parsedByPython(_ bytes: [UInt8], in dir: TemporaryDirectory) throws -> [String: (String?, [String: String])] {
        let file = dir.child("list-\(UUID().uuidString).xbel")
        try Data(bytes).write(to: file)
        let script = """
            import json, sys, xml.etree.ElementTree as ET
            ns = {'bookmark': 'http://www.freedesktop.org/standards/desktop-bookmarks', 'mime': 'http://www.freedesktop.org/standards/shared-mime-info'}
            out = {}
            for b in ET.parse(sys.argv[1]).getroot().findall('bookmark'):
                mime = b.find('.//mime:mime-type', ns)
                apps = {a.get('name'): a.get('count') for a in b.findall('.//bookmark:application', ns)}
                out[b.get('href')] = [mime.get('type') if mime is not None else None, apps]
            print(json.dumps(out))
            """
        let run = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, file.path])
        guard run.status == 0, let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: [Any]] else {
            throw TestFailure("Python could not read the list: \(run.stderr)")
        }
        return object.mapValues { ($0[0] as? String, ($0[1] as? [String: String]) ?? [:]) }
    }

    @Test func usesAreWrittenAsGTKWritesThemAndTheRestStays() throws {
        let dir = try TemporaryDirectory("xbel-write")
        // Below the microsecond, as `Date()` is: the list keeps microseconds.
        let date = Date(timeIntervalSince1970: 1_800_000_000.250_000_4)
        // A file GTK already lists: its dates and a new application entry; the rest byte for byte.
        let cafe = RecentlyUsedList.Use(path: "/home/u/Documents/Café notes.txt", mimeType: "text/plain", application: "Folio", exec: "'folio open %u'", date: date)
        let once = try RecentlyUsedList.recording(cafe, in: Array(gtkRecents.utf8))
        let text = String(decoding: once, as: UTF8.self)
        let tail = gtkRecents[gtkRecents.range(of: "  <bookmark href=\"file:///home/u/a&amp;b.odt\"")!.lowerBound...]
        #expect(text.hasSuffix(tail), "the other bookmarks changed")
        #expect(text.contains(#"<bookmark href="file:///home/u/Documents/Caf%C3%A9%20notes.txt" added="2026-11-20T10:00:00.123456Z" modified="2027-01-15T08:00:00.250000Z" visited="2027-01-15T08:00:00.250000Z">"#), "\(text)")
        let twice = try RecentlyUsedList.recording(cafe, in: once)
        var parsed = try Self.parsedByPython(twice, in: dir)
        #expect(parsed["file:///home/u/Documents/Caf%C3%A9%20notes.txt"]?.1 == ["gedit": "2", "Folio": "2"])
        #expect(parsed.count == 3)

        // A file it does not list: a bookmark at the end, found by GTK's reader and ours.
        let odd = RecentlyUsedList.Use(path: "/tmp/x&y <z>.md", mimeType: "text/markdown", application: "com.example.Editor", exec: "'folio open --app com.example.Editor %u'", date: date + 60)
        let added = try RecentlyUsedList.recording(odd, in: twice)
        parsed = try Self.parsedByPython(added, in: dir)
        #expect(parsed["file:///tmp/x&y%20%3Cz%3E.md"]?.0 == "text/markdown" && parsed["file:///tmp/x&y%20%3Cz%3E.md"]?.1 == ["com.example.Editor": "1"], "\(parsed.keys)")
        let list = try RecentlyUsedList(bytes: added)
        #expect(list.entries.first?.path == "/tmp/x&y <z>.md" && list.entries.first?.application == "com.example.Editor")
        #expect(abs((list.entries.first?.date ?? .distantPast).timeIntervalSince(date + 60)) < 0.000_001)

        // No list yet: one is made; a list that does not read is never rewritten.
        let fresh = try RecentlyUsedList.recording(odd, in: [])
        #expect(try RecentlyUsedList(bytes: fresh).entries.map(\.path) == ["/tmp/x&y <z>.md"])
        #expect(try Self.parsedByPython(fresh, in: dir).count == 1)
        #expect(throws: RecentlyUsedList.Failure.self) { try RecentlyUsedList.recording(odd, in: Array("<xbel><bookmark href='file:///x".utf8)) }
    }
}
