import Foundation
import Synchronization

/// "Stitching" (WWDC14 234): the end of a coordinated write tells this process's live queries at
/// once, before the writer's claim is released — no waiting for the file system to be watched
/// or rescanned.
final class MetadataStitching: Sendable {
    static let shared = MetadataStitching()

    private let listeners = Mutex<[ObjectIdentifier: @Sendable ([String]) -> Void]>([:])
    private let count = Atomic<Int>(0)

    func add(_ owner: AnyObject, _ listener: @escaping @Sendable ([String]) -> Void) {
        listeners.withLock {
            $0[ObjectIdentifier(owner)] = listener
            count.store($0.count, ordering: .relaxed)
        }
    }

    func remove(_ owner: AnyObject) {
        listeners.withLock {
            $0[ObjectIdentifier(owner)] = nil
            count.store($0.count, ordering: .relaxed)
        }
    }

    /// A coordinated write of `paths` is ending (its claim is about to be released).
    func writesEnding(_ paths: [String]) {
        guard count.load(ordering: .relaxed) > 0 else { return }
        for listener in listeners.withLock({ Array($0.values) }) { listener(paths) }
    }
}
