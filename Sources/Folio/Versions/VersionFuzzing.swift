import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Entry points for the fuzz targets in `Fuzz/` (not API): the version store's readers of bytes
/// found on disk.
@_spi(Fuzzing)
public enum VersionFuzzing {
    /// Treats `bytes` as a document's version manifest and as its identity attribute: reading must
    /// either accept or report damage, never trap, and a damaged manifest must be moved aside.
    public static func exercise(_ bytes: [UInt8]) {
        _ = DocumentIdentity.isValid(String(decoding: bytes, as: UTF8.self))
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("folio-fuzz-versions-\(getpid())").path
        let store = VersionStore(directory: root)
        let identity = "0f1830af-6cd9-4b7b-9f22-15f0179c2a80"
        try? FileManager.default.createDirectory(atPath: store.itemsDirectory, withIntermediateDirectories: true)
        let path = store.manifestPath(identity)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        do {
            let manifest = try store.manifest(identity)
            precondition(manifest == nil || manifest!.versions.allSatisfy { VersionStore.isHash($0.object) })
        } catch {
            precondition(!FileManager.default.fileExists(atPath: path), "a damaged manifest was left in place")
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: store.itemsDirectory)) ?? [] {
            try? FileManager.default.removeItem(atPath: store.itemsDirectory + "/" + name)
        }
    }
}
