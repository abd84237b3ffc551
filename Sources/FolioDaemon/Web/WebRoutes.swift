import Folio
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix

/// The page's API under `/api` (docs/web.md): reads (`WebRoutes+Browse`), changes
/// (`WebRoutes+Actions`) and the push of changes (`WebRoutes+Events`). Every handler checks each
/// path it is given against the scope first, and runs what blocks (files, SQLite, claims) on the
/// daemon's pools or the index's queue, never on Swift's cooperative pool.
enum WebRoutes {
    static func addRoutes(to router: Router<WebRequestContext>, state: WebState) {
        let api = router.group("api")
        addBrowseRoutes(to: api, state: state)
        addActionRoutes(to: api, state: state)
        addEventRoutes(to: api, state: state)
        addPickerRoutes(to: api, state: state)
        addVersionRoutes(to: api, state: state)
        addThumbnailRoute(to: api, state: state)
        addGrantRoutes(to: api, state: state)
        addDriveRoutes(to: api, state: state)
        addOpenRoutes(to: api, state: state)
        addTemplateRoutes(to: api, state: state)
    }

    /// Runs a handler and turns its refusals and failures into JSON errors with their status.
    static func answer(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let refusal as WebScope.Refusal {
            return WebJSON.error(HTTPResponse.Status(code: refusal.status), refusal.message)
        } catch let failure as CoordinationFailure {
            return WebJSON.error(WebJSON.status(of: failure), failure.message)
        } catch let error as DecodingError {
            return WebJSON.error(.badRequest, "the request's JSON does not fit: \(Self.describe(error))")
        } catch {
            return WebJSON.error(.internalServerError, "\(error)")
        }
    }

    /// The most a change's body may hold.
    static let bodyLimit = 1 << 20

    /// The JSON body of a change (at most ``bodyLimit``; past it, 413 — told from the
    /// `Content-Length` before any of the body is read, when the client sends one).
    static func body<T: Decodable>(_ type: T.Type, of request: Request) async throws -> T {
        let tooLarge = WebScope.Refusal(status: 413, message: "the body is larger than \(bodyLimit >> 20) MiB")
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > bodyLimit { throw tooLarge }
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: bodyLimit) } catch is NIOTooManyBytesError { throw tooLarge }
        return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
    }

    /// A query parameter that must be there.
    static func parameter(_ name: String, of request: Request) throws(WebScope.Refusal) -> String {
        guard let value = request.uri.queryParameters.get(name) else { throw WebScope.Refusal(status: 400, message: "missing parameter \(name)") }
        return value
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "missing \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case .dataCorrupted: "not JSON"
        @unknown default: "\(error)"
        }
    }
}

extension WebState {
    /// Runs blocking work on the daemon's pool for `placement` (`.quick`: a few syscalls or one
    /// statement; `.slow`: walks, copies, waits for claims).
    func blocking<T: Sendable>(_ placement: RequestPlacement, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard let pool = context.pools.pool(for: placement) else { return try work() }
        return try await pool.runIfActive(work)
    }
}
