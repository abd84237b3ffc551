import NIOCore
import NIOHTTP1

/// Sits before Hummingbird's conversion of HTTP/1 heads to HTTP types, which keeps only the first
/// `Host` field as the authority and drops the host of an absolute-form request target
/// (`GET http://evil.example/ HTTP/1.1`): it marks a head with more than one `Host` or with an
/// absolute-form target (a header of its own, which it first strips from what the client sent),
/// and ``WebGate`` refuses a marked request with 400.
final class RequestTargetGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// The header that carries the finding to ``WebGate``.
    static let marker = "X-Folio-Refused-Target"

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        head.headers.remove(name: Self.marker)
        if head.headers["Host"].count > 1 {
            head.headers.add(name: Self.marker, value: "more than one Host field")
        } else if !head.uri.hasPrefix("/"), head.uri != "*" {
            head.headers.add(name: Self.marker, value: "an absolute-form request target")
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// Hummingbird adds its extra handlers after the conversion; this one puts the guard right
    /// after NIO's HTTP/1 decoder (before the conversion), then leaves the pipeline.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Never

        func handlerAdded(context: ChannelHandlerContext) {
            let pipeline = context.pipeline.syncOperations
            if let decoder = try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) {
                try? pipeline.addHandler(RequestTargetGuard(), position: .after(decoder))
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
