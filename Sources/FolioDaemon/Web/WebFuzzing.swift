@_spi(Fuzzing) import Folio
import Foundation

/// Entry point for the trash-record fuzz target in `Fuzz/` (not API): `.trashinfo` files, which
/// any program of the user's may write into the trash, and the page's path and name checks.
@_spi(Fuzzing)
public enum WebFuzzing {
    /// Parses `bytes` as a `.trashinfo`: refused or read, never a trap. A record read names an
    /// absolute, plain path, which written again reads back the same.
    public static func exercise(_ bytes: [UInt8]) {
        if let parsed = FreedesktopTrash.parse(info: Data(bytes)) {
            precondition((try? WebScope.checkForm(parsed.path)) != nil, "a trash record named a path that is not plain: \(parsed.path)")
            let again = FreedesktopTrash.parse(info: Data(FreedesktopTrash.info(path: parsed.path, date: Date(timeIntervalSince1970: 0))))
            precondition(again?.path == parsed.path, "a trash record's path changed when written again: \(parsed.path) → \(again?.path ?? "nil")")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if (try? WebScope.checkName(text)) != nil { precondition(!text.contains("/") && text != ".." && text != ".", "a name with a path in it passed: \(text)") }
        if (try? WebScope.checkForm(text)) != nil {
            precondition(text.hasPrefix("/") && !text.split(separator: "/").contains(".."), "a path that leaves its folder passed: \(text)")
        }
    }
}
