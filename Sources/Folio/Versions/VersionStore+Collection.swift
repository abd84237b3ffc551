package import Foundation
import Logging
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension VersionStore {
    /// Runs `collectGarbage` when the last run is an hour old (a stamp file's age), so the cap holds
    /// without a scheduler.
    func collectIfDue() {
        let stamp = directory + "/last-collection"
        var status = stat()
        if stat(stamp, &status) == 0, Date().timeIntervalSince1970 - Double(status.st_mtim.tv_sec) < 3600 { return }
        _ = FileManager.default.createFile(atPath: stamp, contents: nil)
        do { try collectGarbage() } catch { logger.warning("version store collection failed", metadata: ["error": "\(error)"]) }
    }

    /// What a collection did.
    package struct CollectionReport: Sendable, Equatable {
        package var versionsDropped = 0
        package var objectsRemoved = 0
        package var bytesKept: Int64 = 0
    }

    /// Enforces the size cap and frees unreferenced contents: while the versions of all documents
    /// take more than `maximumBytes`, the oldest version that is not an unresolved conflict goes;
    /// then objects no manifest names (and older than `grace`, so a version being added right now
    /// is safe) are removed. Damaged manifests are left alone (and reported by the listing).
    @discardableResult
    package func collectGarbage(grace: TimeInterval = 600) throws -> CollectionReport {
        var report = CollectionReport()
        restoreSetAside()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: itemsDirectory)) ?? []
        let identities = names.compactMap(Self.identity(ofManifestNamed:))
        var manifests: [(String, VersionManifest)] = []
        for identity in identities {
            if let manifest = try? manifest(identity) { manifests.append((identity, manifest)) }
        }
        // Sizes count each object once, however many versions name it.
        func referencedBytes() -> Int64 {
            var seen: [String: Int64] = [:]
            for (_, manifest) in manifests { for version in manifest.versions { seen[version.object] = version.size } }
            return seen.values.reduce(0, +)
        }
        var total = referencedBytes()
        if total > limits.maximumBytes {
            var candidates: [(addedAt: Double, identity: String, id: String)] = []
            for (identity, manifest) in manifests {
                for version in manifest.versions where !(version.isConflict && !version.isResolved) {
                    candidates.append((version.addedAt, identity, version.id))
                }
            }
            candidates.sort { $0.addedAt < $1.addedAt }
            var drop: [String: Set<String>] = [:]
            var index = 0
            while total > limits.maximumBytes, index < candidates.count {
                let candidate = candidates[index]
                drop[candidate.identity, default: []].insert(candidate.id)
                if let position = manifests.firstIndex(where: { $0.0 == candidate.identity }) {
                    manifests[position].1.versions.removeAll { $0.id == candidate.id }
                }
                total = referencedBytes()
                index += 1
            }
            for (identity, ids) in drop {
                let path = manifests.first { $0.0 == identity }?.1.lastKnownPath ?? ""
                try update(identity, path: path) { manifest in
                    let before = manifest.versions.count
                    manifest.versions.removeAll { ids.contains($0.id) }
                    report.versionsDropped += before - manifest.versions.count
                }
            }
        }
        // Unreferenced objects, read again under the current manifests.
        var referenced = Set<String>()
        for identity in identities {
            if let manifest = try? manifest(identity) { for version in manifest.versions { referenced.insert(version.object) } }
        }
        let now = Date().timeIntervalSince1970
        for prefix in (try? FileManager.default.contentsOfDirectory(atPath: objectsDirectory)) ?? [] where prefix.count == 2 {
            let folder = objectsDirectory + "/" + prefix
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !referenced.contains(name) {
                let path = folder + "/" + name
                guard Self.age(of: path, now: now) >= grace else { continue }
                // Set aside first, then the time read again: a version that shared these contents
                // between the two looks refreshed them (`refresh`), and the object goes back.
                let aside = objectsDirectory + "/tmp/collected-" + name
                guard rename(path, aside) == 0 else { continue }
                if Self.age(of: aside, now: now) >= grace, unlink(aside) == 0 {
                    report.objectsRemoved += 1
                } else {
                    rename(aside, path)
                }
            }
        }
        report.bytesKept = total
        return report
    }

    /// Puts back the objects a collection set aside and did not finish with (it was killed between
    /// the two steps); this collection weighs them again.
    private func restoreSetAside() {
        let folder = objectsDirectory + "/tmp"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("collected-") {
            let hash = String(name.dropFirst("collected-".count))
            guard Self.isHash(hash) else { continue }
            rename(folder + "/" + name, objectPath(hash))
        }
    }

    /// Seconds since the file at `path` was last modified (0 when it cannot be read).
    private static func age(of path: String, now: Double) -> Double {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return now - Double(status.st_mtim.tv_sec)
    }
}
