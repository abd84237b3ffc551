@_spi(Fuzzing) import FolioProviders
import FuzzSupport

/// PROPFIND replies from WebDAV servers, which the server controls: refused with a reason or read,
/// never a trap, and no href decodes to a path outside the base.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    WebDAVFuzzing.exerciseMultistatus(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzMultistatus_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzMultistatus_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
