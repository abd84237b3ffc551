@_spi(Fuzzing) import Folio
import FuzzSupport

/// Replies of out-of-process providers, which may be written by anyone: refused with a reason or read,
/// never a trap, and an item read survives encoding again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    WireFuzzing.exerciseProviderFrame(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzProviderFrame_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzProviderFrame_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
