import FolioSystem
public import Foundation
import Logging
import Synchronization

#if !canImport(Darwin)
extension NSNotification.Name {
    /// Posted on `NotificationCenter.default` (object nil) when the drive is set up, removed, or
    /// pointed at another server or account: Apple's `NSUbiquityIdentityDidChange`. A process is
    /// told once it has read `FileManager.ubiquityIdentityToken` (as Apple asks apps to do at
    /// launch), on a thread of Folio's, not the main queue.
    public static let NSUbiquityIdentityDidChange = NSNotification.Name("NSUbiquityIdentityDidChangeNotification")
}
#endif

/// The drive's identity as `ubiquityIdentityToken` gives it, and the watch on the drive's
/// configuration that posts `NSUbiquityIdentityDidChange` when it changes.
final class UbiquityIdentity: Sendable {
    static let shared = UbiquityIdentity()

    private struct State: ~Copyable {
        var watcher: InotifyWatcher?
        /// The configuration file watched (the first reader's paths).
        var configuration: String?
        var token: String?
    }

    private let state = Mutex(State())
    private let logger = Logger(label: "folio.ubiquity")

    /// The identity now: `folio-drive:` and the SHA-256 of the drive's configuration (its kind,
    /// server, account, bucket and prefix; the secret is kept elsewhere), nil without a drive. The
    /// first call starts the watch.
    func token(paths: FolioPaths) -> String? {
        state.withLock { state in
            if state.watcher == nil { startWatching(paths, &state) }
            guard state.configuration == paths.driveConfiguration else { return Self.read(paths.driveConfiguration) }
            return state.token
        }
    }

    private func startWatching(_ paths: FolioPaths, _ state: inout State) {
        let configuration = paths.driveConfiguration
        let directory = (configuration as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let watcher = try InotifyWatcher(logger: logger) { [weak self] events in self?.changed(events) }
            // Watched before it is read: a change between the two is told.
            if watcher.watch(directory) { state.watcher = watcher } else { watcher.stop() }
        } catch {
            logger.warning("the drive's configuration cannot be watched; NSUbiquityIdentityDidChange will not be posted: \(error)")
        }
        state.configuration = configuration
        state.token = Self.read(configuration)
    }

    private func changed(_ events: [InotifyWatcher.Event]) {
        let changed: Bool = state.withLock { state in
            guard let configuration = state.configuration else { return false }
            let touched = events.contains { event in
                switch event {
                case .created(let path), .modified(let path), .deleted(let path), .movedIn(let path), .movedOut(let path): path == configuration
                case .moved(let from, let to): from == configuration || to == configuration
                case .overflow: true
                }
            }
            guard touched else { return false }
            let token = Self.read(configuration)
            guard token != state.token else { return false }
            state.token = token
            return true
        }
        if changed { NotificationCenter.default.post(name: .NSUbiquityIdentityDidChange, object: nil) }
    }

    private static func read(_ configuration: String) -> String? {
        guard let data = FileManager.default.contents(atPath: configuration) else { return nil }
        return "folio-drive:" + ContentDigest.sha256(of: data)
    }
}
