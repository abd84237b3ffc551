import Hummingbird
import NIOCore

/// The page's request context: Hummingbird's, with the TCP ports of the connection, so the gate
/// can tell whose process is on the other end (`LoopbackPeer`).
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's port and ours, on 127.0.0.1.
    let ports: (remote: Int, local: Int)?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        if let remote = source.channel.remoteAddress?.port, let local = source.channel.localAddress?.port {
            ports = (remote, local)
        } else {
            ports = nil
        }
    }
}
