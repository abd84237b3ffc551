import FuzzSupport
@_spi(Fuzzing) import Folio

/// Bookmark data from untrusted hands (and payloads signed with the key): refused or valid, never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    BookmarkFuzzing.exercise(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzBookmark_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzBookmark_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
