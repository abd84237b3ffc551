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

    /// Whether the item at `url` is in the drive (Apple: in iCloud), downloaded or a placeholder.
    public func isUbiquitousItem(at url: URL) -> Bool {
        guard let path = Self.drivePath(url) else { return false }
        return fileExists(atPath: path) || fileExists(atPath: path + PlaceholderStub.suffix)
    }

    /// `url`'s path when it names a place in the drive (not the drive's own `.folio` folders).
    private static func drivePath(_ url: URL) -> String? {
        let path = CoordinationPath.normalize(url.path)
        guard path.hasPrefix(FolioPaths().driveDirectory + "/"), !path.contains("/.folio") else { return nil }
        return path
    }

    /// The error for an item that is not in the drive.
    private static func notInDrive(_ url: URL) -> CocoaError {
        CocoaError(.fileNoSuchFile, userInfo: [NSURLErrorKey: url, NSLocalizedDescriptionKey: "\(url.path) is not in the drive"])
    }

    /// Starts downloading the drive item at `url` (a placeholder, or a folder's placeholders) and
    /// returns at once; the download's progress and outcome show in the item's ubiquity values
    /// (`promisedItemResourceValues`, a `MetadataQuery`, presenters). It runs as a coordinated
    /// read, which the daemon materializes before it is granted.
    ///
    /// - Throws: `CocoaError.fileNoSuchFile` when the item is not in the drive.
    public func startDownloadingUbiquitousItem(at url: URL) throws {
        guard isUbiquitousItem(at: url) else { throw Self.notInDrive(url) }
        // A thread of its own: the wait is for the network, never on a shared pool.
        let thread = Thread {
            var error: NSError?
            FileCoordinator().coordinate(readingItemAt: url, options: .withoutChanges, error: &error) { _ in }
        }
        thread.name = "folio-start-download"
        thread.start()
    }

    /// Removes the local copy of the drive item at `url` (or of the files below the folder): it
    /// stays a placeholder, its content on the server, downloaded again when read.
    ///
    /// - Throws: `CocoaError.fileNoSuchFile` when the item is not in the drive; the daemon's
    ///   refusal (a pinned file, changes the server does not have yet, no access) as Apple's errors.
    public func evictUbiquitousItem(at url: URL) throws {
        guard isUbiquitousItem(at: url) else { throw Self.notInDrive(url) }
        guard let daemon = AccessClient.daemon else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "evicting needs the Folio daemon (folio daemon)"])
        }
        _ = try AccessClient.send(daemon, DriveEvictRequest(path: CoordinationPath.normalize(url.path)))
    }

    /// A URL anyone may download a copy of the drive file at `url` from, without the drive's
    /// credentials, until the date written to `outDate` (Apple: a link to the iCloud copy). The
    /// drive's provider makes it: on an S3 drive a presigned URL, valid for seven days (S3's
    /// longest). Synchronous, as Apple's: it asks the server; call it off the main thread.
    ///
    /// - Throws: `CocoaError.fileNoSuchFile` when the item is not in the drive; `.featureUnsupported`
    ///   when the drive's server cannot make links (WebDAV), for a folder, or for a file whose
    ///   changes the server does not have yet; the daemon's refusal (no access) as Apple's errors.
    public func url(forPublishingUbiquitousItemAt url: URL, expiration outDate: UnsafeMutablePointer<NSDate?>?) throws -> URL {
        guard isUbiquitousItem(at: url) else { throw Self.notInDrive(url) }
        guard let daemon = AccessClient.daemon else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "publishing needs the Folio daemon (folio daemon)"])
        }
        let reply = try AccessClient.send(daemon, DrivePublishRequest(path: CoordinationPath.normalize(url.path)))
        guard let published = URL(string: reply.url) else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "the daemon's link is not a URL"])
        }
        outDate?.pointee = NSDate(timeIntervalSince1970: reply.expiration)
        return published
    }

    /// Moves the item at `url` into the drive (`flag` true: `destinationURL` in the drive, an app's
    /// ubiquity container say) or out of it (`flag` false: a destination outside), as one
    /// coordinated move: presenters of the item follow it, and the drive's sync sends or forgets
    /// it. Synchronous, as Apple's; call it off the main thread.
    ///
    /// - Throws: `CocoaError.fileWriteInvalidFileName` when the destination is on the wrong side
    ///   of the drive, `.fileNoSuchFile` without an item, `.fileWriteFileExists` when the
    ///   destination is taken, or the coordination's or the move's error.
    public func setUbiquitous(_ flag: Bool, itemAt url: URL, destinationURL: URL) throws {
        let destination = CoordinationPath.normalize(destinationURL.path)
        guard (Self.drivePath(destinationURL) != nil) == flag, !destination.contains("/.folio") else {
            throw CocoaError(.fileWriteInvalidFileName, userInfo: [
                NSURLErrorKey: destinationURL,
                NSLocalizedDescriptionKey: flag ? "\(destination) is not in the drive" : "\(destination) is in the drive",
            ])
        }
        guard fileExists(atPath: url.path) else { throw CocoaError(.fileNoSuchFile, userInfo: [NSURLErrorKey: url]) }
        guard !fileExists(atPath: destination) else { throw CocoaError(.fileWriteFileExists, userInfo: [NSURLErrorKey: destinationURL]) }
        let coordinator = FileCoordinator()
        var coordination: NSError?
        var failure: (any Error)?
        coordinator.coordinate(
            writingItemAt: url, options: .forMoving, writingItemAt: URL(fileURLWithPath: destination), options: .forReplacing, error: &coordination
        ) { from, to in
            do {
                try createDirectory(at: to.deletingLastPathComponent(), withIntermediateDirectories: true)
                try moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            } catch {
                failure = error
            }
        }
        if let coordination { throw coordination }
        if let failure { throw failure }
    }

    /// The drive's identity, nil when no drive is set up (Apple: the iCloud account signed in).
    /// Equal tokens mean the same server and account; read it at launch, and observe
    /// `NSUbiquityIdentityDidChange`, posted from then on when the drive is set up, removed or
    /// pointed elsewhere.
    public var ubiquityIdentityToken: (any NSCoding & NSCopying & NSObjectProtocol)? {
        UbiquityIdentity.shared.token(paths: FolioPaths()).map { NSString(string: $0) }
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
