import Folio

/// Builds driver commands (see `CoordinationDriver`).
enum Command {
    static func read(_ id: String, _ path: String, _ options: FileCoordinator.ReadingOptions = [], _ extra: [String: WireValue] = [:]) -> WireValue {
        make(["op": "read", "id": .string(id), "path": .string(path), "options": .int(Int64(options.rawValue))], extra)
    }

    static func write(_ id: String, _ path: String, _ options: FileCoordinator.WritingOptions = [], _ extra: [String: WireValue] = [:]) -> WireValue {
        make(["op": "write", "id": .string(id), "path": .string(path), "options": .int(Int64(options.rawValue))], extra)
    }

    static func write2(
        _ id: String, _ path: String, _ options: FileCoordinator.WritingOptions, _ path2: String,
        _ options2: FileCoordinator.WritingOptions, _ extra: [String: WireValue] = [:]
    ) -> WireValue {
        make(
            [
                "op": "write2", "id": .string(id), "path": .string(path), "options": .int(Int64(options.rawValue)),
                "path2": .string(path2), "options2": .int(Int64(options2.rawValue)),
            ], extra)
    }

    static func release(_ id: String) -> WireValue { ["op": "release", "id": .string(id)] }

    static func presenter(_ name: String, _ path: String, directory: Bool = false, _ behaviour: [String: WireValue] = [:]) -> WireValue {
        make(["op": "presenter", "name": .string(name), "path": .string(path), "directory": .bool(directory)], behaviour)
    }

    private static func make(_ base: [String: WireValue], _ extra: [String: WireValue]) -> WireValue {
        var all = base
        for (key, value) in extra { all[key] = value }
        return .object(all)
    }
}
