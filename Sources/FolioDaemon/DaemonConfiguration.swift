public import Folio

/// What the daemon needs to start: where its files live.
public struct DaemonConfiguration: Sendable {
    /// The XDG places: socket, index database, apps, containers.
    public var paths: FolioPaths

    /// How long a presenter may take to answer a coordination's message before that coordination
    /// fails (and the presenter is logged as the culprit).
    public var presenterTimeout: Duration

    /// Creates a configuration; by default from the process environment.
    public init(paths: FolioPaths = FolioPaths(), presenterTimeout: Duration = .seconds(30)) {
        self.paths = paths
        self.presenterTimeout = presenterTimeout
    }
}
