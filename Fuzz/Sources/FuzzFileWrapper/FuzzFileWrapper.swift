import FuzzSupport
@_spi(Fuzzing) import Folio

/// `FileWrapper(serializedRepresentation:)` on bytes from a pasteboard or a drag: refused, or a
/// wrapper that serializes back to what it reads, never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FileWrapperFuzzing.exercise(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzFileWrapper_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzFileWrapper_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
