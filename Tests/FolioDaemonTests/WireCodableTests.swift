import Folio
import FolioTestTraits
import Testing

/// The typed requests' codec: `WireValue` ↔ `Codable`, with errors that name the member.
@Suite("Typed requests: the wire codec", .elasticPool)
struct WireCodableTests {
    private struct Item: Codable, Equatable {
        var path: String
        var size: UInt64?
    }

    private struct Listing: Codable, Equatable {
        var items: [Item]
        var note: String?
        var extra: WireValue?
    }

    private func failure(_ body: () throws(CoordinationFailure) -> Void) -> CoordinationFailure? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func valuesSurviveTheWireAndNilsStayOut() throws {
        let listing = Listing(items: [Item(path: "/a", size: 3), Item(path: "/b", size: nil)], note: nil, extra: ["k": [1, "x", .null]])
        let wire = try WireValueEncoder().encode(listing)
        #expect(wire["note"] == nil && wire["items"]?.arrayValue?[1]["size"] == nil, "\(wire)")
        let parsed = try WireValue(parsing: wire.serialized())
        #expect(try WireValueDecoder().decode(Listing.self, from: parsed) == listing)

        let type = TypeDescription(identifier: "public.png", declared: true, dynamic: false, mimeType: "image/png", supertypes: ["public.image"])
        #expect(try WireValueDecoder().decode(TypeDescription.self, from: try WireValueEncoder().encode(type)) == type)
    }

    @Test func badParametersNameTheMember() throws {
        let decoder = WireValueDecoder()
        let cases: [(WireValue, String)] = [
            (["items": [["path": "/a"], ["path": 5]]], "params.items[1].path must be a string, not 5"),
            (["items": [["path": "/a", "size": -1]]], "params.items[0].size must be a non-negative integer, not -1"),
            (["items": "none"], "params.items must be an array, not a string"),
            ([:], "params.items is missing"),
            (.array([]), "params must be an object, not an array"),
        ]
        for (value, message) in cases {
            let error = failure { () throws(CoordinationFailure) in _ = try decoder.decode(Listing.self, from: value) }
            #expect(error?.kind == .invalid && error?.message == message, "\(value) → \(String(describing: error))")
        }
        #expect(failure { () throws(CoordinationFailure) in _ = try TypesOf(params: ["path": "relative"]) }?.message == "params.path must be an absolute path")
        #expect(failure { () throws(CoordinationFailure) in _ = try TypesShow(params: nil) }?.message == "params.type is missing")
        #expect(failure { () throws(CoordinationFailure) in _ = try Search(params: ["text": ""]) }?.message == "params.text must not be empty")
        #expect(failure { () throws(CoordinationFailure) in _ = try Recents(params: ["limit": 0]) }?.message == "params.limit must be 1 to 100000")
        #expect(failure { () throws(CoordinationFailure) in _ = try RecentsAdd(params: ["path": "/a", "event": "eaten"]) }?.message == "params.event must be opened, created or modified")
        // A query keeps its own checks (the predicate parser's error, the scopes' limits).
        let query = failure { () throws(CoordinationFailure) in _ = try QueryStart(params: ["query": 1, "predicate": "kMDItemFSName ==", "scopes": ["/"]]) }
        #expect(query?.kind == .invalid && query?.message.hasPrefix("predicate:") == true, "\(String(describing: query))")
        #expect(failure { () throws(CoordinationFailure) in _ = try QueryStart(params: ["query": 1, "predicate": "TRUEPREDICATE", "scopes": []]) }?.message == "scopes must be an array of 1 to 64 folders")
        // Paths come out normalized; a query survives the trip.
        #expect(try IndexAdd(params: ["path": "/a//b/../c/"]).path == "/a/c")
        let started = try QueryStart(params: ["query": 7, "predicate": "kMDItemFSName == 'x'", "scopes": ["/tmp"], "interval": .double(0.5)])
        #expect(started.scopes == [ClientPath("/tmp")])
        let spec = started.spec(folders: ["/tmp"])
        #expect(try QueryStart(params: try WireValueEncoder().encode(QueryStart(spec))).spec(folders: ["/tmp"]) == spec)
        let long = String(repeating: "x", count: 1025)
        #expect(failure { () throws(CoordinationFailure) in _ = try TypesShow(params: ["type": .string(long)]) }?.message == "params.type is longer than 1024 bytes")
    }

    @Test func coordinationAndAccessRequestsCheckTheirParameters() throws {
        // A claim survives the trip to the arbiter's form with its options, paths normalized.
        let claim = ClaimRequest(
            claim: 9, purpose: "p", presenter: 4,
            items: [ClaimItem(path: "/a", access: .write(.forDeleting)), ClaimItem(path: "/b/../c", access: .read(.withoutChanges))],
            includesContents: true)
        let decoded = try SubmitClaim(params: try WireValueEncoder().encode(SubmitClaim(claim))).request(claim: 9)
        #expect(decoded.items == [ClaimItem(path: "/a", access: .write(.forDeleting)), ClaimItem(path: "/c", access: .read(.withoutChanges))])
        #expect(decoded.purpose == "p" && decoded.presenter == 4 && decoded.includesContents)

        let cases: [(() throws(CoordinationFailure) -> Void, String)] = [
            ({ () throws(CoordinationFailure) in _ = try SubmitClaim(params: ["purpose": "p", "items": []]) }, "claim needs items"),
            ({ () throws(CoordinationFailure) in _ = try SubmitClaim(params: ["purpose": "p", "items": [["path": "x", "access": "read", "options": 0]]]) },
             "params.items[0].path must be an absolute path"),
            ({ () throws(CoordinationFailure) in _ = try SubmitClaim(params: ["purpose": "p", "items": [["path": "/x", "access": "read"]]]) },
             "params.items[0].options is missing"),
            ({ () throws(CoordinationFailure) in _ = try Release(params: ["claim": -1]) }, "params.claim must be a non-negative integer, not -1"),
            ({ () throws(CoordinationFailure) in _ = try BookmarkResolve(params: ["data": "%%%"]) }, "params.data must be base64"),
            ({ () throws(CoordinationFailure) in _ = try PickerRequest(params: ["mode": "steal"]) }, "mode must be one of import, open, export, move"),
            ({ () throws(CoordinationFailure) in _ = try PickerRequest(params: ["mode": "export"]) }, "export needs the documents to export in urls"),
            ({ () throws(CoordinationFailure) in _ = try GrantRevoke(params: [:]) }, "grant.revoke needs a grant number, or an app (and a path)"),
            ({ () throws(CoordinationFailure) in _ = try GrantAdd(params: ["app": "x", "path": "/a"]) },
             "params.app must be an app identifier (reverse DNS: letters, digits, '-' and '.')"),
            ({ () throws(CoordinationFailure) in _ = try UbiquityChanged(params: ["path": "/a", "keys": [1]]) }, "params.keys[0] must be a string, not 1"),
        ]
        for (decode, message) in cases {
            let error = failure(decode)
            #expect(error?.kind == .invalid && error?.message == message, "\(message) → \(String(describing: error))")
        }
        // A cancelled choice and a picker request keep their meaning on the trip.
        #expect(try PickerChoose(params: try WireValueEncoder().encode(PickerChoose(request: 3, paths: nil))).chosen == nil)
        let pick = PickerRequest(mode: .open, types: ["public.text"], allowsMultipleSelection: true, directory: "/d")
        #expect(try PickerRequest(params: pick.wireValue) == pick)
    }

    /// The claim and the release read their members directly (the hot path): they must agree with
    /// their `Codable` forms on good and bad parameters alike, messages included.
    @Test func hotPathRequestsAgreeWithTheirCodableForms() {
        let item: WireValue = ["path": "/a/../b", "access": "write", "options": 1]
        let claims: [WireValue?] = [
            nil, ["purpose": "p", "items": [item]], ["purpose": "p", "presenter": 3, "contents": true, "items": [item, item]],
            ["purpose": "p", "presenter": .null, "contents": .null, "items": [item]], ["purpose": 5, "items": [item]],
            ["purpose": "p"], ["purpose": "p", "items": .null], ["purpose": "p", "items": [5]], ["purpose": "p", "items": [["path": "/a"]]],
            ["purpose": "p", "items": [["path": "/a", "access": "read", "options": -1]]],
            ["purpose": "p", "items": [["path": "/a", "access": "read", "options": .double(2)]]],
            ["purpose": "p", "presenter": "x", "items": [item]], ["purpose": "p", "contents": 1, "items": [item]],
            ["purpose": "", "items": [item]], ["purpose": "p", "items": []], .array([]), "text",
        ]
        for params in claims { #expect(SubmitClaim.disagreement(params) == nil, "\(String(describing: params))") }
        let releases: [WireValue?] = [nil, ["claim": 4], ["claim": -4], ["claim": "4"], ["claim": .null], [:], .array([])]
        for params in releases { #expect(Release.disagreement(params) == nil, "\(String(describing: params))") }
    }
}

/// The status budget weighs values by `serializedCount`, which must be the length `serialized()`
/// writes, escapes and all.
@Suite("Wire: serialized sizes")
struct WireSerializedCountTests {
    @Test func theCountIsTheLengthWritten() {
        let values: [WireValue] = [
            .null, true, false, .int(0), .int(-1234567), .double(3.25), .double(.infinity), "", "plain", "quote \" back \\ nl \n cr \r tab \t bell \u{7}",
            "é ü 文字", .array([]), .array([.int(1), "two", .null]), .object([:]),
            ["b": 1, "a": ["nested": ["x", .bool(true)], "empty": .object([:])], "s\"k": "v\n"],
        ]
        for value in values { #expect(value.serializedCount == value.serialized().count, "\(String(decoding: value.serialized(), as: UTF8.self))") }
    }
}
