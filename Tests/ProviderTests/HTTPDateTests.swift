@testable import FolioProviders
import FolioTestTraits
import Foundation
import Testing

/// HTTP dates as listings and replies carry them, read by hand (``HTTPDate``): the three forms of
/// RFC 9110, the same instants Foundation's formatter reads, and no date from a malformed one.
@Suite("HTTP dates", .elasticPool)
struct HTTPDateTests {
    /// RFC 9110's three examples name one instant.
    @Test func readsTheThreeFormsOfRFC9110() {
        let instant = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == instant)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == instant)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == instant)
    }

    /// Over two centuries of instants (leap days, the ends of months and years among them), each
    /// written as IMF-fixdate by Foundation's formatter reads back as the same instant.
    @Test func agreesWithFoundationsFormatter() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SystemRandomNumberGenerator()
        let start = -2_208_988_800.0  // 1900-01-01
        let end = 4_102_444_800.0  // 2100-01-01
        var instants = (0..<2_000).map { _ in (Double.random(in: start..<end, using: &generator)).rounded(.down) }
        instants += [951_782_400, 951_868_799, 1_078_012_800, 4_107_542_399, 946_684_799, 946_684_800, 0]  // 2000-02-29, 2004-02-29, 2100-02-28 …
        for seconds in instants {
            let text = formatter.string(from: Date(timeIntervalSince1970: seconds))
            #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: seconds), "\(text)")
        }
    }

    /// What is not a date is refused: impossible days and times, other zones, missing or extra
    /// fields, wrong digits, and long input.
    @Test func refusesWhatIsNotADate() {
        for text in [
            "", "GMT", "Sun, 30 Feb 1994 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 6x Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT extra", "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun Nov 31 08:49:37 1994", "Sun, 06 Nov 1994 08::49:37 GMT", "Sunday, 06--Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, -6 Nov 1994 08:49:37 GMT",
            String(repeating: "Sun, 06 Nov 1994 08:49:37 GMT ", count: 4),
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 23:59:60 GMT") == Date(timeIntervalSince1970: 951_868_800), "a leap second is the next minute's first")
    }
}
