/// The coordination requests (docs/protocol.md, "Coordination"): claims, their release, presenters
/// and their answers. Claims and releases are the hot path: each coordinated read or write of a
/// daemon client sends one of each.

/// `claim`: a claim on one or more items, granted atomically. The frame's `id` names the claim;
/// the reply is its grant (`ClaimGrant`) or its failure, which may come much later.
package struct SubmitClaim: HotPathRequest {
    package static let method = "claim"
    package typealias Reply = ClaimGrant

    /// One item: its path, `read` or `write`, and the options' raw bits.
    package struct Item: Codable, Sendable {
        package var path: ClientPath
        package var access: String
        package var options: UInt

        init(path: String, access: String, options: UInt) {
            self.path = ClientPath(path)
            self.access = access
            self.options = options
        }

        package init(_ item: ClaimItem) {
            path = ClientPath(item.path)
            switch item.access {
            case .read(let options):
                access = "read"
                self.options = options.rawValue
            case .write(let options):
                access = "write"
                self.options = options.rawValue
            }
        }
    }

    /// Claims with equal purposes never block each other.
    package var purpose: String
    /// The presenter the coordinator was made with: it hears nothing of this claim.
    package var presenter: UInt64?
    package var items: [Item]
    /// Presenters inside the named folders get the folders' messages (`prepare(forReadingItemsAt:…)`).
    package var contents: Bool?

    package init(members params: WireValue?) throws(CoordinationFailure) {
        let members = try WireMembers(params)
        purpose = try members.string("purpose")
        presenter = try members.optionalUnsigned("presenter")
        items = []
        for (index, value) in try members.array("items").enumerated() {
            let item = try WireMembers(value, name: "params.items[\(index)]")
            items.append(Item(path: try item.string("path"), access: try item.string("access"), options: UInt(try item.unsigned("options"))))
        }
        contents = try members.optionalBool("contents")
    }

    package func encodedParams() -> WireValue {
        var params: [String: WireValue] = [
            "purpose": .string(purpose),
            "items": .array(items.map { ["path": .string($0.path.text), "access": .string($0.access), "options": .int(Int64($0.options))] }),
        ]
        if let presenter { params["presenter"] = .int(Int64(presenter)) }
        if let contents { params["contents"] = .bool(contents) }
        return .object(params)
    }

    package init(_ request: ClaimRequest) {
        purpose = request.purpose
        presenter = request.presenter
        items = request.items.map(Item.init)
        contents = request.includesContents ? true : nil
    }

    package mutating func validate() throws(CoordinationFailure) {
        try WireCheck.length(purpose, "params.purpose", limit: CoordinationWire.maximumPurposeBytes)
        guard !purpose.isEmpty else { throw CoordinationWire.invalid("claim needs a non-empty purpose") }
        guard !items.isEmpty else { throw CoordinationWire.invalid("claim needs items") }
        guard items.count <= CoordinationWire.maximumItems else {
            throw CoordinationWire.invalid("a claim may name at most \(CoordinationWire.maximumItems) items")
        }
        for index in items.indices {
            items[index].path = ClientPath(try WireCheck.normalizedPath(items[index].path.text, "params.items[\(index)].path"))
            guard items[index].options <= 0xFF else { throw CoordinationWire.invalid("unknown option bits \(items[index].options)") }
            guard items[index].access == "read" || items[index].access == "write" else {
                throw CoordinationWire.invalid("an item's access is \"read\" or \"write\"")
            }
        }
    }

    /// The arbiter's form of the claim numbered `claim` (after `validate()`).
    package func request(claim: UInt64) -> ClaimRequest {
        ClaimRequest(
            claim: claim, purpose: purpose, presenter: presenter,
            items: items.map { item in
                ClaimItem(
                    path: item.path.text,
                    access: item.access == "write" ? .write(.init(rawValue: item.options)) : .read(.init(rawValue: item.options)))
            },
            includesContents: contents ?? false)
    }
}

/// A claim's grant: the items' paths as they are now (moves made under the claim included).
package struct ClaimGrant: Codable, Sendable {
    package var paths: [String]
}

/// The empty reply of a request that only acts (`{}`).
package struct Acknowledged: Codable, Sendable, Equatable {
    package init() {}
}

/// `release`: ends claim `claim` (a notification).
package struct Release: HotPathRequest {
    package static let method = "release"
    package typealias Reply = Acknowledged
    package var claim: UInt64
    package init(claim: UInt64) { self.claim = claim }
    package init(members params: WireValue?) throws(CoordinationFailure) { claim = try WireMembers(params).unsigned("claim") }
    package func encodedParams() -> WireValue { ["claim": .int(Int64(claim))] }
}

/// `cancel`: withdraws claim `claim`, granted or waiting (a notification).
package struct Cancel: DaemonRequest {
    package static let method = "cancel"
    package typealias Reply = Acknowledged
    package var claim: UInt64
    package init(claim: UInt64) { self.claim = claim }
}

/// `moved`: under claim `claim`, the item at `from` is now at `to` (`item(at:didMoveTo:)`).
package struct Moved: DaemonRequest {
    package static let method = "moved"
    package typealias Reply = Acknowledged
    package var claim: UInt64
    package var from: ClientPath
    package var to: ClientPath

    package init(claim: UInt64, from: String, to: String) {
        self.claim = claim
        self.from = ClientPath(from)
        self.to = ClientPath(to)
    }

    package mutating func validate() throws(CoordinationFailure) {
        from = ClientPath(try WireCheck.normalizedPath(from.text, "params.from"))
        to = ClientPath(try WireCheck.normalizedPath(to.text, "params.to"))
    }
}

/// `presenter.add`: registers presenter `presenter` of the item at `path` (none yet: nil). A
/// request, so that once `addFilePresenter` returns every process's coordinations see it.
package struct PresenterAdd: DaemonRequest {
    package static let method = "presenter.add"
    package typealias Reply = Acknowledged
    package var presenter: UInt64
    package var purpose: String
    package var path: ClientPath?

    package init(presenter: UInt64, purpose: String, path: String?) {
        self.presenter = presenter
        self.purpose = purpose
        self.path = path.map(ClientPath.init)
    }

    package mutating func validate() throws(CoordinationFailure) {
        try WireCheck.length(purpose, "params.purpose", limit: CoordinationWire.maximumPurposeBytes)
        guard !purpose.isEmpty else { throw CoordinationWire.invalid("purpose must not be empty") }
        path = try WireCheck.optionalNormalizedPath(path?.text, "params.path").map(ClientPath.init)
    }
}

/// `presenter.update`: presenter `presenter` now presents the item at `path` (a notification).
package struct PresenterUpdate: DaemonRequest {
    package static let method = "presenter.update"
    package typealias Reply = Acknowledged
    package var presenter: UInt64
    package var path: ClientPath?

    package init(presenter: UInt64, path: String?) {
        self.presenter = presenter
        self.path = path.map(ClientPath.init)
    }

    package mutating func validate() throws(CoordinationFailure) {
        path = try WireCheck.optionalNormalizedPath(path?.text, "params.path").map(ClientPath.init)
    }
}

/// `presenter.remove`: forgets presenter `presenter` (a notification).
package struct PresenterRemove: DaemonRequest {
    package static let method = "presenter.remove"
    package typealias Reply = Acknowledged
    package var presenter: UInt64
    package init(presenter: UInt64) { self.presenter = presenter }
}

/// `presenter.answer`: a presenter's answer to the message sent with `token` (a notification).
package struct PresenterReply: DaemonRequest {
    package static let method = "presenter.answer"
    package typealias Reply = Acknowledged

    /// The presenter's own error, as Apple's `NSError` would carry it.
    package struct Failure: Codable, Sendable {
        package var domain: String
        package var code: Int?
        package var message: String
    }

    package var token: UInt64
    /// For a relinquishment: whether the presenter handed back a reacquirer.
    package var reacquirer: Bool?
    package var error: Failure?

    package init(_ answer: PresenterAnswer) {
        token = answer.token
        reacquirer = answer.hasReacquirer
        error = answer.error.map {
            Failure(domain: $0.domain ?? "NSCocoaErrorDomain", code: $0.code ?? 0, message: $0.message)
        }
    }

    package func validate() throws(CoordinationFailure) {
        guard let error else { return }
        try WireCheck.length(error.message, "params.error.message", limit: 4096)
        try WireCheck.length(error.domain, "params.error.domain", limit: 256)
    }

    /// The arbiter's form of the answer.
    package var answer: PresenterAnswer {
        PresenterAnswer(
            token: token,
            error: error.map { CoordinationFailure(kind: .presenterError, message: $0.message, domain: $0.domain, code: $0.code ?? 0) },
            hasReacquirer: reacquirer ?? false)
    }
}

/// `ubiquity.changed`: the drive's attributes `keys` of the item at `path` changed (a notification
/// from the drive's own process; presenters hear `presentedItemDidChangeUbiquityAttributes`).
package struct UbiquityChanged: DaemonRequest {
    package static let method = "ubiquity.changed"
    package typealias Reply = Acknowledged
    package var path: ClientPath
    package var keys: [String]

    package init(path: String, keys: [String]) {
        self.path = ClientPath(path)
        self.keys = keys
    }

    package mutating func validate() throws(CoordinationFailure) {
        path = ClientPath(try WireCheck.normalizedPath(path.text, "params.path"))
        try WireCheck.strings(keys, "params.keys", limit: 64, each: 256)
    }
}
