@_spi(Fuzzing) import Folio
@_spi(Fuzzing) import FolioSync
import FuzzSupport

/// Placeholder stubs (`name.folio-cloud`), which any program can write into the drive, the
/// shared conflict manifests a server serves, and the log of unfinished-transfer notes, which a
/// crash can cut anywhere: refused or read, never a trap; a stub stands for the file its name says,
/// a manifest never leaves the drive, a note read is written back the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    PlaceholderFuzzing.exerciseStub(bytes)
    SyncFuzzing.exerciseConflictManifest(bytes)
    SyncFuzzing.exerciseUnfinishedNoteLog(bytes)
    return 0
}

/// SwiftPM links executables through `FuzzPlaceholder_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzPlaceholder_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
