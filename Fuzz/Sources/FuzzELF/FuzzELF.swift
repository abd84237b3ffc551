import FolioSystem
import FuzzSupport

/// ELF dynamic sections (any file an app ships beside its executable, which `folio run --sandbox`
/// reads for the libraries it binds): refused or read, never a trap; every name read is a
/// non-empty string.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    if let section = ELFDynamicSection(bytes: Array(UnsafeRawBufferPointer(start: start, count: count))) {
        precondition(section.needed.allSatisfy { !$0.isEmpty }, "an empty library name was read")
    }
    return 0
}

/// SwiftPM links executables through `FuzzELF_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzELF_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
