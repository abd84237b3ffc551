import Folio

extension ClientSession {
    func claim(id: WireValue, params: WireValue?, client: UInt32) throws -> WireValue? {
        guard let number = id.intValue, number > 0 else {
            throw RequestError.badRequest("a claim needs a positive \"id\", which names the claim")
        }
        var request = try CoordinationWire.claimRequest(id: UInt64(number), params: params)
        for index in request.items.indices {
            request.items[index].path = CoordinationPath.normalize(request.items[index].path)
        }
        try context.arbiter.submit(request, from: client)
        return nil  // the reply is the grant, later
    }

    func release(_ params: WireValue?, client: UInt32) throws -> WireValue? {
        try context.arbiter.release(try claimNumber(params), from: client)
        return [:]
    }

    func cancel(_ params: WireValue?, client: UInt32) throws -> WireValue? {
        context.arbiter.cancel(try claimNumber(params), from: client)
        return [:]
    }

    func moved(_ params: WireValue?, client: UInt32) throws -> WireValue? {
        let params = try object(params)
        let from = CoordinationPath.normalize(try CoordinationWire.path(params, "from"))
        let to = CoordinationPath.normalize(try CoordinationWire.path(params, "to"))
        try context.arbiter.moved(from: from, to: to, claim: try claimNumber(params), client: client)
        return [:]
    }

    func addPresenter(_ params: WireValue?, client: UInt32) throws -> WireValue? {
        let params = try object(params)
        let presenter = try CoordinationWire.number(params, "presenter")
        let purpose = try CoordinationWire.string(params, "purpose", limit: CoordinationWire.maximumPurposeBytes)
        let path = try CoordinationWire.optionalPath(params, "path").map { CoordinationPath.normalize($0) }
        try context.arbiter.addPresenter(presenter, purpose: purpose, path: path, client: client)
        return [:]
    }

    func updatePresenter(_ params: WireValue?, client: UInt32) throws -> WireValue? {
        let params = try object(params)
        let presenter = try CoordinationWire.number(params, "presenter")
        let path = try CoordinationWire.optionalPath(params, "path").map { CoordinationPath.normalize($0) }
        try context.arbiter.updatePresenter(presenter, path: path, client: client)
        return [:]
    }

    func removePresenter(_ params: WireValue?, client: UInt32) throws -> WireValue? {
        let params = try object(params)
        context.arbiter.removePresenter(try CoordinationWire.number(params, "presenter"), client: client)
        return [:]
    }

    func answer(_ params: WireValue?, client: UInt32) throws -> WireValue? {
        try context.arbiter.answer(try CoordinationWire.answer(params: params), from: client)
        return [:]
    }

    func ubiquityChanged(_ params: WireValue?, client: UInt32) throws -> WireValue? {
        let params = try object(params)
        let path = CoordinationPath.normalize(try CoordinationWire.path(params, "path"))
        guard let keys = params["keys"]?.arrayValue, keys.count <= 64 else {
            throw RequestError.badRequest("keys must be an array of at most 64 names")
        }
        context.arbiter.ubiquityAttributesChanged(at: path, keys: keys.compactMap(\.stringValue), client: client)
        return [:]
    }

    private func object(_ params: WireValue?) throws -> WireValue {
        guard let params, case .object = params else { throw RequestError.badRequest("params must be an object") }
        return params
    }

    private func claimNumber(_ params: WireValue?) throws -> UInt64 {
        try CoordinationWire.number(try object(params), "claim")
    }
}
