import Folio
import FolioSystem
import SystemPackage
import Foundation
import Synchronization

/// The registered apps as the daemon sees them: manifests read from `Apps/<id>.{plist,json}` when
/// first asked for and again whenever the file changes, so `folio app register` takes effect at
/// once without a restart.
final class AppCatalog: Sendable {
    let paths: FolioPaths
    private let cache = Mutex<[String: (stamp: Double, manifest: AppManifest)]>([:])

    init(paths: FolioPaths) {
        self.paths = paths
    }

    /// The manifest of app `identifier`, or nil when no such app is registered.
    func manifest(_ identifier: String) -> AppManifest? {
        guard WireCheck.isValidApp(identifier) else { return nil }
        for suffix in ["json", "plist"] {
            let file = "\(paths.appsDirectory)/\(identifier).\(suffix)"
            guard let status = try? FileStatus(path: FilePath(file), followSymlinks: true) else { continue }
            if let cached = cache.withLock({ $0[identifier] }), cached.stamp == status.modificationTime { return cached.manifest }
            guard let manifest = try? AppManifest(contentsOf: URL(fileURLWithPath: file)), manifest.bundleIdentifier == identifier else {
                return nil
            }
            cache.withLock { $0[identifier] = (status.modificationTime, manifest) }
            return manifest
        }
        return nil
    }

    /// The registered apps' identifiers, by name.
    func identifiers() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: paths.appsDirectory)) ?? []
        let identifiers = names.compactMap { name -> String? in
            guard name.hasSuffix(".json") || name.hasSuffix(".plist") else { return nil }
            return (name as NSString).deletingPathExtension
        }
        return Array(Set(identifiers.filter(WireCheck.isValidApp))).sorted()
    }

    /// App `identifier`'s container, made when missing.
    func container(_ identifier: String) throws -> AppContainer {
        let container = AppContainer(appIdentifier: identifier, paths: paths)
        try container.create()
        return container
    }

    /// The filename extensions of app `identifier`'s related item types (`NSIsRelatedItemType`).
    func relatedExtensions(_ identifier: String) -> Set<String> {
        guard let manifest = manifest(identifier) else { return [] }
        var result = Set<String>()
        for claim in manifest.relatedItemClaims {
            result.formUnion(claim.extensions.map { $0.lowercased() })
            for identifier in claim.contentTypes {
                guard let type = UTType(identifier) else { continue }
                result.formUnion((type.tags[.filenameExtension] ?? []).map { $0.lowercased() })
            }
        }
        return result
    }
}
