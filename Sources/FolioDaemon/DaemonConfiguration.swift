public import Folio

/// What the daemon needs to start: where its files live.
public struct DaemonConfiguration: Sendable {
    /// The XDG places: socket, index database, apps, containers.
    public var paths: FolioPaths

    /// Creates a configuration; by default from the process environment.
    public init(paths: FolioPaths = FolioPaths()) {
        self.paths = paths
    }
}
