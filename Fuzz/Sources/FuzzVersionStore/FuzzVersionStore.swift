import FuzzSupport
@_spi(Fuzzing) import Folio

/// Version manifests and identity attributes as found on disk: damaged ones are reported and moved
/// aside, never trusted, never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    VersionFuzzing.exercise(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzVersionStore_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzVersionStore_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
