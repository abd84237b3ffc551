#if os(Linux)
/// Turns the kernel's events, read by read, into an `InotifyWatcher`'s: the two halves of a rename
/// (`IN_MOVED_FROM`, `IN_MOVED_TO`, one cookie) become one move, also when the kernel hands them to
/// two reads, which it does on a loaded machine. A first half whose second has not come within
/// `window` becomes a move out. Order is kept: what came after a waiting first half waits with it,
/// and a pair takes the place of its first half.
///
/// Pure state, no I/O and no clock of its own: the watcher's thread drives it, tests feed it.
struct InotifyMovePairing {
    private enum Slot {
        case ready(InotifyWatcher.Event)
        case waiting(cookie: UInt32, path: String, deadline: ContinuousClock.Instant)
    }

    /// How long a first half waits for its second.
    let window: Duration
    /// Events not yet handed out, oldest first.
    private var slots: [Slot] = []
    /// How many slots were handed out since the start: `waiting` holds positions counted from it.
    private var delivered = 0
    /// The waiting first halves: cookie → position.
    private var waiting: [UInt32: Int] = [:]

    init(window: Duration) {
        self.window = window
    }

    /// When the oldest waiting first half expires (nil: none waits).
    var deadline: ContinuousClock.Instant? {
        for slot in slots {
            if case .waiting(_, _, let deadline) = slot { return deadline }
        }
        return nil
    }

    /// Takes one read's events and returns those now complete, in order.
    ///
    /// - Parameter directory: the directory of a watch, nil when it is no longer watched (its
    ///   events are dropped). Events about a watched directory itself (no name) and removed
    ///   watches are dropped too: the directory's parent reports the former when it is watched.
    mutating func add(
        _ events: [Inotify.Event], at now: ContinuousClock.Instant, directory: (Inotify.Watch) -> String?
    ) -> [InotifyWatcher.Event] {
        for event in events {
            if event.mask.contains(.queueOverflow) {
                // The other halves may be among what was lost: every first half counts as gone.
                expire(before: nil)
                slots.append(.ready(.overflow))
                continue
            }
            guard !event.mask.contains(.ignored), !event.name.isEmpty, let folder = directory(event.watch) else { continue }
            let path = folder == "/" ? "/" + event.name : folder + "/" + event.name
            if event.mask.contains(.movedFrom) {
                // Cookies are not reused; should one be, the earlier half must not wait forever.
                if let earlier = waiting[event.cookie], case .waiting(_, let from, _) = slots[earlier - delivered] {
                    slots[earlier - delivered] = .ready(.movedOut(from))
                }
                waiting[event.cookie] = delivered + slots.count
                slots.append(.waiting(cookie: event.cookie, path: path, deadline: now + window))
            } else if event.mask.contains(.movedTo) {
                if let position = waiting.removeValue(forKey: event.cookie), case .waiting(_, let from, _) = slots[position - delivered] {
                    slots[position - delivered] = .ready(.moved(from: from, to: path))
                } else {
                    slots.append(.ready(.movedIn(path)))
                }
            } else if event.mask.contains(.create) {
                slots.append(.ready(.created(path)))
            } else if event.mask.contains(.delete) {
                slots.append(.ready(.deleted(path)))
            } else if !event.mask.isDisjoint(with: [.closeWrite, .attributes]) {
                slots.append(.ready(.modified(path)))
            }
        }
        return drain()
    }

    /// Turns the first halves whose wait is over at `now` into moves out, and returns the events
    /// now complete.
    mutating func expire(at now: ContinuousClock.Instant) -> [InotifyWatcher.Event] {
        expire(before: now)
        return drain()
    }

    /// Turns the first halves expiring at or before `now` (all of them: nil) into moves out.
    private mutating func expire(before now: ContinuousClock.Instant?) {
        for (cookie, position) in waiting {
            guard case .waiting(_, let path, let deadline) = slots[position - delivered] else { continue }
            guard now.map({ deadline <= $0 }) ?? true else { continue }
            slots[position - delivered] = .ready(.movedOut(path))
            waiting[cookie] = nil
        }
    }

    /// Hands out the ready events before the first waiting one.
    private mutating func drain() -> [InotifyWatcher.Event] {
        var ready: [InotifyWatcher.Event] = []
        for slot in slots {
            guard case .ready(let event) = slot else { break }
            ready.append(event)
        }
        slots.removeFirst(ready.count)
        delivered += ready.count
        return ready
    }
}
#endif
