import Foundation

/// HTTP dates (`Last-Modified`, `getlastmodified`) in the three forms RFC 9110 §5.6.7 tells a
/// recipient to accept: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`). Read by hand: a
/// listing holds one per item, and Foundation's `DateFormatter` took 25 µs each here (a quarter of a
/// second for a listing of 10,000 files).
enum HTTPDate {
    /// The date `text` names, or nil when it is none of the three forms (or names no real time).
    static func parse(_ text: String) -> Date? {
        if let date = fixdate(text) { return date }
        let trimmed = text.utf8.drop { $0 == 0x20 }
        guard trimmed.count <= 64 else { return nil }
        let fields: [Substring.UTF8View]
        let day: Int, month: Int, year: Int, clock: Substring.UTF8View
        if let comma = trimmed.firstIndex(of: UInt8(ascii: ",")) {
            fields = Substring(trimmed[trimmed.index(after: comma)...]).utf8.split(separator: 0x20).map { Substring($0).utf8 }
            if fields.first?.contains(UInt8(ascii: "-")) == true {
                // RFC 850: 06-Nov-94 08:49:37 GMT
                let parts = fields[0].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
                guard fields.count == 3, parts.count == 3, let d = number(parts[0], digits: 1...2), let m = monthNumber(parts[1]), let y = number(parts[2], digits: 2...2),
                    isGMT(fields[2])
                else { return nil }
                // A two-digit year is the one in the century nearest now: within 50 years ahead, or behind.
                (day, month, year, clock) = (d, m, y < 70 ? 2000 + y : 1900 + y, fields[1])
            } else {
                // IMF-fixdate: 06 Nov 1994 08:49:37 GMT
                guard fields.count == 5, let d = number(fields[0], digits: 1...2), let m = monthNumber(fields[1]), let y = number(fields[2], digits: 4...4),
                    isGMT(fields[4])
                else { return nil }
                (day, month, year, clock) = (d, m, y, fields[3])
            }
        } else {
            // asctime: Sun Nov  6 08:49:37 1994
            fields = Substring(trimmed).utf8.split(separator: 0x20).map { Substring($0).utf8 }
            guard fields.count == 5, let m = monthNumber(fields[1]), let d = number(fields[2], digits: 1...2), let y = number(fields[4], digits: 4...4) else { return nil }
            (day, month, year, clock) = (d, m, y, fields[3])
        }
        let parts = clock.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = number(parts[0], digits: 2...2), let minute = number(parts[1], digits: 2...2), let second = number(parts[2], digits: 2...2)
        else { return nil }
        return date(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The instant of these fields read from a date, or nil when they name no real time.
    private static func date(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard hour < 24, minute < 60, second <= 60, day >= 1, day <= daysIn(month, of: year) else { return nil }
        let seconds = ((daysSinceEpoch(year: year, month: month, day: day) * 24 + hour) * 60 + minute) * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// IMF-fixdate as servers write it, exactly 29 bytes (`Sun, 06 Nov 1994 08:49:37 GMT`), read at
    /// its fixed offsets without splitting it into fields (a listing holds one per item); nil for
    /// anything else, which the general reading then takes.
    private static func fixdate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20, bytes[16] == 0x20,
                bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 0x20,
                bytes[26] == UInt8(ascii: "G"), bytes[27] == UInt8(ascii: "M"), bytes[28] == UInt8(ascii: "T")
            else { return nil }
            func digits(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for byte in bytes[start..<(start + count)] {
                    guard byte >= 0x30, byte <= 0x39 else { return nil }
                    value = value * 10 + Int(byte - 0x30)
                }
                return value
            }
            let name = bytes[8..<11]
            guard let day = digits(5, 2), let year = digits(12, 4), let hour = digits(17, 2), let minute = digits(20, 2), let second = digits(23, 2),
                let month = months.firstIndex(where: { $0.utf8.elementsEqual(name) }).map({ $0 + 1 })
            else { return nil }
            return date(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        }
    }

    /// The decimal number `text` spells with a count of digits in `digits`.
    private static func number(_ text: Substring.UTF8View, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.count) else { return nil }
        var value = 0
        for byte in text {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// 1 for `Jan` … 12 for `Dec` (case as HTTP writes them).
    private static func monthNumber(_ text: Substring.UTF8View) -> Int? {
        guard text.count == 3 else { return nil }
        return months.firstIndex { $0.utf8.elementsEqual(text) }.map { $0 + 1 }
    }

    private static func isGMT(_ text: Substring.UTF8View) -> Bool {
        text.elementsEqual("GMT".utf8) || text.elementsEqual("UTC".utf8)
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date in the proleptic Gregorian calendar (the days-from-civil
    /// algorithm: years counted from March, so the leap day ends a year).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
