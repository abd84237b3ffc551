import Synchronization

/// The mount's nodes: what the kernel knows by number (a FUSE node id), each a name in a parent
/// folder, counted as the protocol counts lookups. A node's path is found by walking to the root,
/// so renaming a folder moves everything below it at once. Node ids index an array (a forgotten
/// node's slot is reused), since a listing of a large folder gives the kernel a node an entry.
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
        /// By node id (0 unused, 1 the root); nil where forgotten.
        var nodes: [Node?] = [nil, Node(parent: 0, name: "", lookups: 1)]
        var byName: [Key: UInt64] = [:]
        /// Forgotten slots, for reuse.
        var free: [UInt64] = []

        func node(_ id: UInt64) -> Node? { id < nodes.count ? nodes[Int(id)] : nil }
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
                guard let node = state.node(current) else { return nil }
                names.append(node.name)
                current = node.parent
            }
            return names.reversed().joined(separator: "/")
        }
    }

    /// The node for `name` in `parent`, made when new; its lookup count raised by one (the
    /// kernel was given it).
    func remember(_ name: String, in parent: UInt64) -> UInt64 {
        remember([name], in: parent)[0]
    }

    /// ``remember(_:in:)`` for each of `names` in `parent`, in one step: their node ids, in order.
    func remember(_ names: [String], in parent: UInt64) -> [UInt64] {
        state.withLock { state in
            names.map { name in
                let key = Key(parent: parent, name: name)
                if let id = state.byName[key] {
                    state.nodes[Int(id)]!.lookups += 1
                    return id
                }
                let node = Node(parent: parent, name: name, lookups: 1)
                let id: UInt64
                if let reused = state.free.popLast() {
                    id = reused
                    state.nodes[Int(id)] = node
                } else {
                    id = UInt64(state.nodes.count)
                    state.nodes.append(node)
                }
                state.byName[key] = id
                return id
            }
        }
    }

    /// The kernel dropped `count` lookups of node `id`: gone at none.
    func forget(_ id: UInt64, _ count: UInt64) {
        guard id != Self.root else { return }
        state.withLock { state in
            guard var node = state.node(id) else { return }
            node.lookups -= min(count, node.lookups)
            guard node.lookups == 0 else {
                state.nodes[Int(id)] = node
                return
            }
            state.nodes[Int(id)] = nil
            state.free.append(id)
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
                state.nodes[Int(moving)]?.parent = newParent
                state.nodes[Int(moving)]?.name = newName
                state.byName[to] = moving
            }
            if exchanged, let replaced {
                state.nodes[Int(replaced)]?.parent = parent
                state.nodes[Int(replaced)]?.name = name
                state.byName[from] = replaced
            }
        }
    }

    /// The node at `components` below the root (none: the root), or nil when the kernel holds none.
    func node<Components: Collection<String>>(at components: Components) -> UInt64? {
        state.withLock { state in
            var current = Self.root
            for name in components {
                guard let id = state.byName[Key(parent: current, name: name)] else { return nil }
                current = id
            }
            return current
        }
    }

    /// How many nodes the kernel holds (the root included).
    var count: Int { state.withLock { $0.nodes.count - 1 - $0.free.count } }
}
