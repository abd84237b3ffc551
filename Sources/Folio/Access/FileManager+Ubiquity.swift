public import Foundation
import FolioSystem

#if !canImport(Darwin)
extension FileManager {
    /// The app's ubiquity container in the user's Drive (`Drive/<container-id>`), made if missing;
    /// nil when no drive is configured (as on a device without iCloud), or when the running app's
    /// manifest does not list the container in `NSUbiquitousContainers`. With nil, the app's first
    /// listed container.
    public func url(forUbiquityContainerIdentifier containerIdentifier: String?) -> URL? {
        UbiquityContainers.url(for: containerIdentifier, app: AppIdentity.current, paths: FolioPaths())
    }

    /// Whether a drive is configured (Apple: an iCloud account is signed in).
    public var ubiquityIdentityToken: (any NSCoding & NSCopying & NSObjectProtocol)? {
        FileManager.default.fileExists(atPath: FolioPaths().driveConfiguration) ? NSString(string: "folio-drive") : nil
    }
}
#endif

/// Where ubiquity containers live.
package enum UbiquityContainers {
    package static func url(for identifier: String?, app: String?, paths: FolioPaths) -> URL? {
        guard FileManager.default.fileExists(atPath: paths.driveConfiguration) else { return nil }
        var chosen = identifier
        if let app {
            let declared = AppManifest.registered(app, in: paths.appsDirectory)?.ubiquitousContainers.map(\.identifier) ?? []
            if let identifier {
                guard declared.contains(identifier) else { return nil }
            } else {
                chosen = declared.first
            }
        }
        guard let chosen, UbiquitousContainer.isValidIdentifier(chosen) else { return nil }
        let url = URL(fileURLWithPath: paths.driveDirectory, isDirectory: true).appendingPathComponent(chosen, isDirectory: true)
        do {
            try FileManager.default.createDirectory(
                at: url.appendingPathComponent("Documents", isDirectory: true), withIntermediateDirectories: true)
        } catch {
            return nil
        }
        return url
    }
}
