@_spi(Fuzzing) import Folio
import FuzzSupport

/// GTK's `recently-used.xbel`, which any program of the user may write: refused with a reason or
/// read, never a trap, and every entry read is an absolute path.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    MetadataFuzzing.exerciseRecentlyUsed(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzRecentlyUsed_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzRecentlyUsed_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
