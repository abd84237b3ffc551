public import Foundation

/// A unique temporary folder for one test or benchmark, removed when the value is deinitialised.
public final class TemporaryDirectory: @unchecked Sendable {
    /// The folder's URL.
    public let url: URL

    /// Creates the folder under `$TMPDIR` (or `/tmp`), named after `label`.
    public convenience init(_ label: String = "folio-test") throws {
        try self.init(label, under: ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp")
    }

    /// Creates the folder under `base`, named after `label`.
    public init(_ label: String, under base: String) throws {
        url = URL(fileURLWithPath: base).appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        guard (try? FileManager.default.removeItem(at: url)) == nil else { return }
        // Trees Foundation cannot remove (paths beyond PATH_MAX): rm walks them relative to each folder.
        let rm = Process()
        rm.executableURL = URL(fileURLWithPath: "/bin/rm")
        rm.arguments = ["-rf", url.path]
        try? rm.run()
        rm.waitUntilExit()
    }

    /// The path of the folder.
    public var path: String { url.path }

    /// Returns the URL of `name` inside the folder.
    public func child(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Writes `data` to `name` (creating intermediate folders) and returns its URL.
    @discardableResult
    public func write(_ name: String, _ data: Data) throws -> URL {
        let target = child(name)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: target)
        return target
    }

    /// Writes a UTF-8 string to `name` and returns its URL.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> URL { try write(name, Data(text.utf8)) }

    /// An environment whose XDG directories all live inside this folder, for a private daemon or CLI.
    /// It reaches no session bus: secrets' keys stay in the folder, not in the user's keyring.
    public func xdgEnvironment(base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var env = base
        env["HOME"] = path + "/home"
        env["XDG_DATA_HOME"] = path + "/data"
        env["XDG_CONFIG_HOME"] = path + "/config"
        env["XDG_STATE_HOME"] = path + "/state"
        env["XDG_RUNTIME_DIR"] = path + "/run"
        env["XDG_CONFIG_DIRS"] = path + "/etc-xdg"
        env["DBUS_SESSION_BUS_ADDRESS"] = nil
        // No display: a daemon under test never opens a page in the developer's browser (the
        // picker does when no page is open).
        env["DISPLAY"] = nil
        env["WAYLAND_DISPLAY"] = nil
        return env
    }
}
