@_spi(Fuzzing) import FolioDaemon
import FuzzSupport

/// `.trashinfo` records (any program may write them into the trash the browser page restores
/// from) and the page's path and name checks: refused or read, never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    WebFuzzing.exercise(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzTrashInfo_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzTrashInfo_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
