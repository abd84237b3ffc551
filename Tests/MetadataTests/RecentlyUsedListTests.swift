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
}
