import Folio

/// How the daemon answers one request type: the type (which decodes and checks the frame's
/// parameters), where its handler runs, and the handler. Adding a request is its `DaemonRequest`
/// type and one route beside its family's others (`ClientSession.routes`): the placement is part of
/// the route, so a handler that may block can never run on an event loop by accident.
struct RequestRoute: Sendable {
    let method: String
    /// The request's type (for fuzzing: it decodes and checks the parameters).
    let requestType: any DaemonRequest.Type
    /// Decodes a frame's parameters into the request and binds it to the session.
    let prepare: @Sendable (_ session: ClientSession, _ id: Int64?, _ params: WireValue?) throws(CoordinationFailure) -> PreparedRequest

    /// A route whose placement depends on the request or the connection (an app's requests check
    /// paths on disk). The handler returns the reply, or nil when the reply comes later (a claim's
    /// grant, the picker's choice, the index's work) or never (a notification).
    init<Request: DaemonRequest>(
        _ type: Request.Type, beforeHello: Bool = false,
        placement: @escaping @Sendable (ClientSession, Request) -> RequestPlacement,
        handler: @escaping @Sendable (ClientSession, Request, Int64?) throws(CoordinationFailure) -> Request.Reply?
    ) {
        method = Request.method
        requestType = Request.self
        prepare = { session, id, params throws(CoordinationFailure) in
            let request = try Request(params: params)
            return PreparedRequest(id: id, placement: placement(session, request)) { () throws(CoordinationFailure) in
                guard beforeHello || session.client != nil else { throw CoordinationFailure(kind: .invalid, message: "say hello first") }
                guard let reply = try handler(session, request, id), id != nil else { return nil }
                return try WireValueEncoder().encode(reply)
            }
        }
    }

    /// A route whose handler always runs at `placement`.
    init<Request: DaemonRequest>(
        _ type: Request.Type, on placement: RequestPlacement, beforeHello: Bool = false,
        handler: @escaping @Sendable (ClientSession, Request, Int64?) throws(CoordinationFailure) -> Request.Reply?
    ) {
        self.init(type, beforeHello: beforeHello, placement: { _, _ in placement }, handler: handler)
    }
}

/// A request decoded and bound to its connection, ready to run where it declared.
struct PreparedRequest: Sendable {
    /// The frame's id (nil: a notification).
    var id: Int64?
    var placement: RequestPlacement
    /// Runs the handler; the reply to write now, or nil (none, or one that comes later).
    let run: @Sendable () throws(CoordinationFailure) -> WireValue?
}

extension ClientSession {
    /// Every request the daemon answers, by method.
    static let routes: [String: RequestRoute] = {
        let all = sessionRoutes + coordinationRoutes + typeRoutes + indexRoutes + accessRoutes + driveRoutes
        return Dictionary(all.map { ($0.method, $0) }, uniquingKeysWith: { first, _ in preconditionFailure("\(first.method) is routed twice") })
    }()
}
