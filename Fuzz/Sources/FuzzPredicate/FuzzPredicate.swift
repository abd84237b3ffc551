import Folio
import Foundation
import FuzzSupport

/// Predicate formats and Spotlight query strings from untrusted hands (a query typed into `folio
/// query` or `folio find`, sent by an app): refused with an error or parsed, and then
/// `predicateFormat` parses back to the same predicate and evaluating it never traps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let format = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    if let query = try? MetadataPredicate(metadataQueryString: format, now: Date(timeIntervalSince1970: 1_790_000_000)) { check(query, format) }
    guard let predicate = try? MetadataPredicate(parsing: format, argumentArray: ["kMDItemFSName", "value", 42]) else { return 0 }
    check(predicate, format)
    return 0
}

private func check(_ predicate: MetadataPredicate, _ format: String) {
    guard let again = try? MetadataPredicate(parsing: predicate.predicateFormat) else {
        preconditionFailure("\(predicate.predicateFormat) does not parse back")
    }
    precondition(again == predicate, "\(format) → \(predicate.predicateFormat) → \(again.predicateFormat)")
    _ = predicate.evaluate { attribute in
        switch attribute.kind {
        case .string: .string("Été Notes.txt")
        case .strings: .array(["public.text", "Red"])
        case .number: .integer(1234)
        case .date: .date(Date(timeIntervalSince1970: 1_700_000_000))
        case .bool: .bool(true)
        }
    }
}

/// SwiftPM links executables through `FuzzPredicate_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzPredicate_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}

