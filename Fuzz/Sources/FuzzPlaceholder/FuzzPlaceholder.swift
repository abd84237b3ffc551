@_spi(Fuzzing) import Folio
import FuzzSupport

/// Placeholder stubs (`name.folio-cloud`), which any program can write into the drive: refused
/// or read, never a trap, and a stub read always names the file it sits in.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    PlaceholderFuzzing.exerciseStub(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzPlaceholder_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzPlaceholder_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
