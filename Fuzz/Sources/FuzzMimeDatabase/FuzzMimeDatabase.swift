import FuzzSupport
import Folio
import Foundation

/// The first byte picks the file the rest pretends to be; loading must never trap and the registry
/// must still know its built-in types.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = Data(bytes: start, count: count)
    let names = ["globs2", "subclasses", "aliases", "magic", "types"]
    let name = names[Int(bytes[0]) % names.count]
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("folio-fuzz-\(getpid())/mime")
    try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try? Data("application/x-a\n".utf8).write(to: dir.appendingPathComponent("types"))
    try? bytes.dropFirst().write(to: dir.appendingPathComponent(name))
    let registry = TypeRegistry(configuration: .init(mimeDirectories: [dir.path]))
    precondition(registry.type(tag: "png", tagClass: .filenameExtension) == .png)
    _ = UTType(String(decoding: bytes.dropFirst(), as: UTF8.self))
    try? FileManager.default.removeItem(at: dir.appendingPathComponent(name))
    return 0
}

/// SwiftPM links executables through `FuzzMimeDatabase_main`; hand control to libFuzzer's driver.
@_cdecl("FuzzMimeDatabase_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { fuzz($0, $1) }
}
