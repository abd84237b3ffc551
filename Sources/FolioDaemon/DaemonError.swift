/// Why the daemon could not start or serve.
public struct DaemonError: Error, Sendable, CustomStringConvertible {
    /// A description for people.
    public var message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}
