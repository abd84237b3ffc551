import FuzzSupport
@_spi(Fuzzing) import FolioDaemon

/// Frames a client might send the daemon (and events the daemon sends clients): decoding must never
/// trap, and what parses must round-trip.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    DaemonFuzzing.exercise(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzWireFrame_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzWireFrame_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
