#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Foundation
import FolioWire

/// Folio's places on disk, under the XDG base directories. Every path can be overridden through the
/// environment, which is how tests get a private tree.
public struct FolioPaths: Sendable, Hashable {
    /// `$XDG_DATA_HOME` (default `~/.local/share`).
    public var dataHome: String
    /// `$XDG_CONFIG_HOME` (default `~/.config`).
    public var configHome: String
    /// `$XDG_STATE_HOME` (default `~/.local/state`).
    public var stateHome: String
    /// `$XDG_RUNTIME_DIR` (default `/tmp/folio-runtime-<uid>` when unset).
    public var runtimeDirectory: String
    /// `$XDG_CONFIG_DIRS` (default `/etc/xdg`).
    public var configDirectories: [String]
    /// `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`).
    public var dataDirectories: [String]

    /// Reads the paths from `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        let home = value("HOME") ?? NSHomeDirectory()
        dataHome = value("XDG_DATA_HOME") ?? home + "/.local/share"
        configHome = value("XDG_CONFIG_HOME") ?? home + "/.config"
        stateHome = value("XDG_STATE_HOME") ?? home + "/.local/state"
        runtimeDirectory = DaemonSocketPath.runtimeDirectory(value("XDG_RUNTIME_DIR"), uid: getuid())
        configDirectories = (value("XDG_CONFIG_DIRS") ?? "/etc/xdg").split(separator: ":").map(String.init)
        dataDirectories = (value("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
    }

    /// `$XDG_DATA_HOME/folio`.
    public var dataDirectory: String { dataHome + "/folio" }
    /// `$XDG_DATA_HOME/folio/Apps`: registered app manifests.
    public var appsDirectory: String { dataDirectory + "/Apps" }
    /// `$XDG_DATA_HOME/folio/Containers`: app containers.
    public var containersDirectory: String { dataDirectory + "/Containers" }
    /// `$XDG_DATA_HOME/folio/Drive`: the local replica of the user's synced drive.
    public var driveDirectory: String { dataDirectory + "/Drive" }
    /// `$XDG_CONFIG_HOME/folio/drive.json`: the drive's configuration; no drive without it.
    public var driveConfiguration: String { configDirectory + "/drive.json" }
    /// `$XDG_DATA_HOME/folio/Versions`: the version store.
    public var versionsDirectory: String { dataDirectory + "/Versions" }
    /// `$XDG_CONFIG_HOME/folio`: configuration.
    public var configDirectory: String { configHome + "/folio" }
    /// `$XDG_STATE_HOME/folio`: the index database and journals.
    public var stateDirectory: String { stateHome + "/folio" }
    /// `$XDG_STATE_HOME/folio/index.sqlite`.
    public var indexDatabase: String { stateDirectory + "/index.sqlite" }
    /// `$XDG_STATE_HOME/folio/index-names.sqlite`: the names' trigram index, beside the index.
    public var indexNamesDatabase: String { Self.namesDatabase(besideIndex: indexDatabase) }

    /// The names' trigram index of the index database at `indexPath` (`x.sqlite` → `x-names.sqlite`).
    public static func namesDatabase(besideIndex indexPath: String) -> String {
        (indexPath.hasSuffix(".sqlite") ? String(indexPath.dropLast(".sqlite".count)) : indexPath) + "-names.sqlite"
    }
    /// `$XDG_RUNTIME_DIR/folio`: the daemon's socket folder (mode 0700).
    public var socketDirectory: String { DaemonSocketPath.directory(inRuntimeDirectory: runtimeDirectory) }
    /// `$XDG_RUNTIME_DIR/folio/folio.sock`.
    public var socketPath: String { DaemonSocketPath.socket(inRuntimeDirectory: runtimeDirectory) }

    /// Makes `path` (and missing parents) a folder only its owner may enter, whatever the umask:
    /// Folio's own folders hold grants, names of documents, keys and sockets. An existing folder is
    /// set to 0700 too.
    public static func makePrivateDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard chmod(path, 0o700) == 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot make \(path) private: \(String(cString: strerror(errno)))"])
        }
    }
}
