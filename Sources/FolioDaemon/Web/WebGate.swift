import Foundation
import HTTPTypes
import Hummingbird
import Logging
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Every request passes here before any route (docs/web.md, "Security"):
/// - the `Host` must be the loopback address and port the page is served on (a DNS-rebinding page
///   names its own host), else 421; a second `Host` or an absolute-form URL gets 400;
/// - the connection must come from a process of this user (`LoopbackPeer`), else 403;
/// - the first URL's `token` query becomes an HttpOnly, SameSite=Strict cookie (303 to the same
///   page without it); a wrong token, and any other request without the cookie, get 401;
/// - a request that changes anything must come from the page itself: `Origin` this server's, no
///   cross-site `Sec-Fetch-Site`, and a JSON body (which a cross-site form cannot send);
/// - every answer carries a strict Content-Security-Policy and is never cached or framed, and says
///   how long the daemon took (`Server-Timing: daemon;dur=`).
struct WebGate: RouterMiddleware {
    typealias Context = WebRequestContext
    let state: WebState

    static let securityHeaders: [(HTTPField.Name, String)] = [
        (
            .contentSecurityPolicy,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'none'; "
                + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        (.xContentTypeOptions, "nosniff"),
        (HTTPField.Name("X-Frame-Options")!, "DENY"),
        (HTTPField.Name("Referrer-Policy")!, "no-referrer"),
        (HTTPField.Name("Cross-Origin-Opener-Policy")!, "same-origin"),
        (HTTPField.Name("Cross-Origin-Resource-Policy")!, "same-origin"),
        (.cacheControl, "no-store"),
    ]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response = try await decide(request, context: context, next: next)
        for (name, value) in Self.securityHeaders { response.headers[name] = value }
        // The daemon's own time for the request, which the page (and `folio bench web`) reads
        // beside the time the browser saw (PerformanceResourceTiming.serverTiming).
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        response.headers[HTTPField.Name("Server-Timing")!] = "daemon;dur=" + String(format: "%.3f", milliseconds)
        return response
    }

    private func decide(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let port = state.port else { return Self.refusal(.serviceUnavailable, "the page is starting") }
        // Exactly one Host, in an origin-form request: the conversion to HTTP types keeps the
        // first Host and drops an absolute URL's host (``RequestTargetGuard`` marks both).
        if let refused = request.headers[HTTPField.Name(RequestTargetGuard.marker)!] {
            return Self.refusal(.badRequest, "refused: \(refused)")
        }
        guard request.headers[HTTPField.Name("Host")!] == nil else { return Self.refusal(.badRequest, "refused: more than one Host field") }
        guard let host = request.head.authority, Self.loopbackHosts(port: port).contains(host.lowercased()) else {
            return Self.refusal(.misdirectedRequest, "this server answers only to 127.0.0.1:\(port)")
        }
        // Another user's process is refused whatever it knows: the token and cookie guard against
        // the user's browser being misled, this against the machine's other users.
        let peers = state.peers
        let owner = try await state.blocking(.quick) { context.ports.flatMap { peers.owner(remote: $0.remote, local: $0.local) } }
        guard owner == getuid() else {
            state.logger.warning(
                "the browser page refused a connection of another user",
                metadata: ["uid": "\(owner.map { "\($0)" } ?? "unknown")", "ports": "\(context.ports.map { "\($0.remote)->\($0.local)" } ?? "none")"])
            return Self.refusal(.forbidden, "this page is another user's")
        }
        if let offered = request.uri.queryParameters.get("token") {
            guard request.method == .get, Self.same(offered, state.token) else { return Self.refusal(.unauthorized, "wrong token: open the page with `folio browse`") }
            // The token leaves the address bar at once; the cookie carries it from now on.
            var query = request.uri.queryParameters.filter { $0.key != "token" }.map { "\($0.key)=\(Self.encode(String($0.value)))" }
            query.sort()
            let location = request.uri.path + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            return Response(
                status: .seeOther,
                headers: [.location: location, .setCookie: "\(state.cookieName)=\(state.token); Path=/; HttpOnly; SameSite=Strict"])
        }
        guard let cookie = request.cookies[state.cookieName]?.value, Self.same(cookie, state.token) else {
            return Self.refusal(.unauthorized, "not signed in: open the page with `folio browse`")
        }
        if request.method != .get && request.method != .head {
            let origins = Self.loopbackHosts(port: port).map { "http://" + $0 }
            guard let origin = request.headers[.origin], origins.contains(origin.lowercased()) else {
                return Self.refusal(.forbidden, "a change must come from the page itself (Origin)")
            }
            if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin" {
                return Self.refusal(.forbidden, "a change must come from the page itself (Sec-Fetch-Site: \(site))")
            }
            guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
                return Self.refusal(.unsupportedMediaType, "a change is sent as JSON")
            }
        }
        return try await next(request, context)
    }

    static func loopbackHosts(port: Int) -> [String] { ["127.0.0.1:\(port)", "localhost:\(port)"] }

    /// Compares in time independent of where the strings differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    static func refusal(_ status: HTTPResponse.Status, _ message: String) -> Response {
        WebJSON.error(status, message)
    }

    private static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))) ?? ""
    }
}
