import Synchronization

/// The mount's nodes: what the kernel knows by number (a FUSE node id), each a name in a parent
/// folder, counted as the protocol counts lookups. A node's path is found by walking to the root,
/// so renaming a folder moves everything below it at once.
final class DriveNodes: Sendable {
    /// The root's node id, as the protocol fixes it.
    static let root: UInt64 = 1

    private struct Node {
        var parent: UInt64
        var name: String
        var lookups: UInt64
    }

    private struct Key: Hashable {
        var parent: UInt64
        var name: String
    }

    private struct State {
        var nodes: [UInt64: Node] = [DriveNodes.root: Node(parent: 0, name: "", lookups: 1)]
        var byName: [Key: UInt64] = [:]
        var next: UInt64 = 2
    }

    private let state = Mutex(State())

    /// The path of node `id` relative to the replica ("" for the root), or nil when the kernel
    /// has forgotten it.
    func path(_ id: UInt64) -> String? {
        state.withLock { state in
            guard id != Self.root else { return "" }
            var names: [String] = []
            var current = id
            while current != Self.root {
                guard let node = state.nodes[current] else { return nil }
                names.append(node.name)
                current = node.parent
            }
            return names.reversed().joined(separator: "/")
        }
    }

    /// The node for `name` in `parent`, made when new; its lookup count raised by one (the
    /// kernel was given it).
    func remember(_ name: String, in parent: UInt64) -> UInt64 {
        state.withLock { state in
            let key = Key(parent: parent, name: name)
            if let id = state.byName[key] {
                state.nodes[id]!.lookups += 1
                return id
            }
            let id = state.next
            state.next += 1
            state.nodes[id] = Node(parent: parent, name: name, lookups: 1)
            state.byName[key] = id
            return id
        }
    }

    /// The kernel dropped `count` lookups of node `id`: gone at none.
    func forget(_ id: UInt64, _ count: UInt64) {
        guard id != Self.root else { return }
        state.withLock { state in
            guard var node = state.nodes[id] else { return }
            node.lookups -= min(count, node.lookups)
            guard node.lookups == 0 else {
                state.nodes[id] = node
                return
            }
            state.nodes[id] = nil
            let key = Key(parent: node.parent, name: node.name)
            if state.byName[key] == id { state.byName[key] = nil }
        }
    }

    /// `name` in `parent` was removed: the name no longer leads to its node (which lives on
    /// until forgotten, for files still open).
    func removed(_ name: String, in parent: UInt64) {
        state.withLock { state in _ = state.byName.removeValue(forKey: Key(parent: parent, name: name)) }
    }

    /// `name` in `parent` was renamed to `newName` in `newParent` (replacing whatever was there);
    /// with `exchanged`, the two swapped places.
    func moved(_ name: String, in parent: UInt64, to newName: String, in newParent: UInt64, exchanged: Bool = false) {
        state.withLock { state in
            let from = Key(parent: parent, name: name), to = Key(parent: newParent, name: newName)
            let moving = state.byName.removeValue(forKey: from)
            let replaced = state.byName.removeValue(forKey: to)
            if let moving {
                state.nodes[moving]?.parent = newParent
                state.nodes[moving]?.name = newName
                state.byName[to] = moving
            }
            if exchanged, let replaced {
                state.nodes[replaced]?.parent = parent
                state.nodes[replaced]?.name = name
                state.byName[from] = replaced
            }
        }
    }

    /// How many nodes the kernel holds (the root included).
    var count: Int { state.withLock { $0.nodes.count } }
}
