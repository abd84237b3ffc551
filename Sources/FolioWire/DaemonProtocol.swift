/// The daemon's wire protocol (docs/protocol.md): one version for the daemon, the library's
/// client and the `folio` front.
package enum DaemonProtocol {
    /// The version `hello` names.
    package static let version: Int64 = 1
}
