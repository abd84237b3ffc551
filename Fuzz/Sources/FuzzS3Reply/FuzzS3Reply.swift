@_spi(Fuzzing) import FolioProviders
import FuzzSupport

/// S3 replies (ListObjectsV2 listings, errors, results), which the server controls: refused with a
/// reason or read, never a trap, and no served key names a path outside the bucket's prefix.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    S3Fuzzing.exerciseReply(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

/// SwiftPM links executables through `FuzzS3Reply_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzS3Reply_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
