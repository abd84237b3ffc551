import Folio
import Foundation

/// `folio bench wire`: the wire's share of a coordination, in process. The frames of the hot path
/// (a claim, its release) go through the typed codec as the client encodes them and the daemon
/// decodes them, against the JSON alone: the same frame serialized and parsed.
enum WireBenchmarks {
    static func run(iterations: Int, rounds: Int) {
        var harness = BenchmarkHarness(rounds: rounds)
        let claim = ClaimRequest(
            claim: 7, purpose: UUID().uuidString, presenter: nil, items: [ClaimItem(path: "/home/user/Documents/notes.txt", access: .write([]))])
        let claimParams = SubmitClaim(claim).encodedParams()
        print("wire codec: \(iterations) frames per round, \(rounds) rounds (median)")
        harness.rate(
            "claim frame, typed: encode, serialize, parse, decode", operations: iterations, baselineName: "the same frame serialized and parsed",
            work: {
                for _ in 0..<iterations {
                    let params = SubmitClaim(claim).encodedParams()
                    let bytes = WireValue.object(["id": 7, "method": .string(SubmitClaim.method), "params": params]).serialized()
                    let frame = try? ClientFrame(decoding: bytes)
                    _ = try? SubmitClaim(params: frame?.params).request(claim: 7)
                }
            },
            baseline: {
                for _ in 0..<iterations {
                    let bytes = WireValue.object(["id": 7, "method": .string(SubmitClaim.method), "params": claimParams]).serialized()
                    _ = try? WireValue(parsing: bytes)
                }
            })
        harness.rate(
            "release notification, typed", operations: iterations, baselineName: "the same frame serialized and parsed",
            work: {
                for _ in 0..<iterations {
                    let params = Release(claim: 7).encodedParams()
                    let bytes = WireValue.object(["method": .string(Release.method), "params": params]).serialized()
                    let frame = try? ClientFrame(decoding: bytes)
                    _ = try? Release(params: frame?.params)
                }
            },
            baseline: {
                for _ in 0..<iterations {
                    let bytes = WireValue.object(["method": .string(Release.method), "params": ["claim": 7]]).serialized()
                    _ = try? WireValue(parsing: bytes)
                }
            })
        harness.report()
    }
}
