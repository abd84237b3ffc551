@_spi(Fuzzing) import FolioProviders
import FuzzSupport

/// HTTP/1.1 replies to the plain client (heads, lengths, chunked bodies, replies one after another), which
/// the server controls: refused or read, never a trap, and no body longer than what was sent.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    HTTPFuzzing.exerciseReply(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzHTTPReply_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzHTTPReply_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
