import FuzzSupport
import Folio
import Foundation

/// Any bytes either parse into a manifest or give a `UniformTypeError`; a registered manifest never
/// breaks the registry.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let registry = TypeRegistry(configuration: .init(mimeDirectories: []))
    if let manifest = try? AppManifest(data: data) {
        try? registry.register(manifest)
        precondition(registry.type(tag: "jpg", tagClass: .filenameExtension) == .jpeg)
    }
    return 0
}

/// SwiftPM links executables through `FuzzManifest_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzManifest_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
