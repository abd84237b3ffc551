import Folio
import Foundation
import Hummingbird
import Logging

extension WebRoutes {
    /// What each app may reach (its grants: the item, read or read-write, for this session or
    /// kept), and revoking one.
    static func addGrantRoutes(to api: RouterGroup<WebRequestContext>, state: WebState) {
        api.get("grants") { _, _ in
            await answer {
                let access = state.context.access
                let grants = try await state.blocking(.slow) {
                    access.currentGrants(of: nil).map { grant -> WireValue in
                        var value = grant.wireValue(home: state.home ?? "").objectValue ?? [:]
                        value["appName"] = .string(access.catalog.manifest(grant.app)?.name ?? grant.app)
                        return .object(value)
                    }
                }
                return WebJSON.response(wire: ["grants": .array(grants)])
            }
        }

        api.post("grants/revoke") { request, _ in
            await answer {
                let change = try await body(RevokeGrant.self, of: request)
                let access = state.context.access
                let removed = try await state.blocking(.quick) {
                    do {
                        return try access.grants.revoke { $0.id == change.grant }
                    } catch {
                        throw CoordinationFailure(kind: .failed, message: "cannot revoke: \(error)")
                    }
                }
                guard !removed.isEmpty else { throw WebScope.Refusal(status: 404, message: "no grant \(change.grant)") }
                for grant in removed { state.logger.info("grant revoked from the browser page", metadata: ["grant": "\(grant.id)", "app": "\(grant.app)"]) }
                return WebJSON.response(["revoked": removed.map(\.id)])
            }
        }
    }
}

struct RevokeGrant: Decodable {
    var grant: Int64
}
