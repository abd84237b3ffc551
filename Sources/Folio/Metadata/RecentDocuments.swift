import Foundation

/// Tells the daemon's index that a document was opened, created or saved, for the recents the
/// browser shows and `kMDItemLastUsedDate` (nothing without a daemon).
enum RecentDocuments {
    enum Event: String {
        case opened, created, modified
    }

    static func note(_ url: URL, _ event: Event, engine: CoordinationEngine) {
        guard let daemon = engine as? DaemonCoordinationEngine else { return }
        daemon.post(RecentsAdd(path: url.path, event: event.rawValue))
    }
}
