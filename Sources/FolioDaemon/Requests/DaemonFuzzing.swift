@_spi(Fuzzing) import Folio

/// Entry point for the wire-frame fuzz target in `Fuzz/` (not API): client frames as the daemon
/// decodes them, through the same routes.
@_spi(Fuzzing)
public enum DaemonFuzzing {
    /// Parses `bytes` as a client frame and decodes its parameters as its method's request. A
    /// request that decodes must encode to parameters that decode to the same request (its paths
    /// normalized once stay as they are); a hot-path request's direct decoder must agree with its
    /// `Codable` one. Traps only on a real defect.
    public static func exercise(_ bytes: [UInt8]) {
        WireFuzzing.exercise(bytes)
        guard let frame = try? ClientFrame(decoding: bytes), let route = ClientSession.routes[frame.method] else { return }
        if let hot = route.requestType as? any HotPathRequest.Type, let disagreement = hot.disagreement(frame.params) {
            preconditionFailure(disagreement)
        }
        guard let request = try? route.requestType.init(params: frame.params) else { return }
        roundTrip(request)
    }

    private static func roundTrip<Request: DaemonRequest>(_ request: Request) {
        guard let encoded = try? request.encodedParams() else { preconditionFailure("a decoded \(Request.method) did not encode") }
        guard let again = try? Request(params: encoded), let reencoded = try? again.encodedParams() else {
            preconditionFailure("an encoded \(Request.method) did not decode: \(encoded)")
        }
        precondition(reencoded == encoded, "\(Request.method) changed on a round trip: \(encoded) → \(reencoded)")
    }
}
