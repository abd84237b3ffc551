@testable import FolioSystem
import FolioTestTraits
import Testing

/// The pairing of rename halves, fed as the watcher's thread feeds it, read by read, with a clock
/// of the test's own: the kernel splits a rename across two reads only now and then, on a loaded
/// machine, so the real watcher cannot be made to show it on demand.
@Suite("InotifyMovePairing", .elasticPool)
struct InotifyMovePairingTests {
    let folder = Inotify.Watch(rawValue: 1), other = Inotify.Watch(rawValue: 2)
    let start = ContinuousClock.now

    func directory(_ watch: Inotify.Watch) -> String? {
        switch watch.rawValue {
        case 1: "/w"
        case 2: "/v"
        default: nil
        }
    }

    @Test func halvesInTwoReadsAreOneMove() {
        var pairing = InotifyMovePairing(window: .milliseconds(50))
        let first = pairing.add([.init(watch: folder, mask: .movedFrom, cookie: 7, name: "a")], at: start, directory: directory)
        #expect(first.isEmpty)
        #expect(pairing.deadline == start + .milliseconds(50))
        let second = pairing.add(
            [.init(watch: other, mask: .movedTo, cookie: 7, name: "b")], at: start + .milliseconds(20), directory: directory)
        #expect(second == [.moved(from: "/w/a", to: "/v/b")])
        #expect(pairing.deadline == nil)
    }

    @Test func aFirstHalfAloneBecomesAMoveOutAfterTheWindow() {
        var pairing = InotifyMovePairing(window: .milliseconds(50))
        _ = pairing.add([.init(watch: folder, mask: .movedFrom, cookie: 8, name: "a")], at: start, directory: directory)
        #expect(pairing.expire(at: start + .milliseconds(49)).isEmpty)
        #expect(pairing.expire(at: start + .milliseconds(50)) == [.movedOut("/w/a")])
        // A late second half is an arrival.
        let late = pairing.add([.init(watch: folder, mask: .movedTo, cookie: 8, name: "b")], at: start + .milliseconds(60), directory: directory)
        #expect(late == [.movedIn("/w/b")])
    }

    @Test func eventsAfterAWaitingHalfKeepTheirOrder() {
        var pairing = InotifyMovePairing(window: .milliseconds(50))
        let first = pairing.add(
            [
                .init(watch: folder, mask: .create, name: "before"),
                .init(watch: folder, mask: .movedFrom, cookie: 9, name: "a"),
                .init(watch: folder, mask: .create, name: "a"),
            ], at: start, directory: directory)
        #expect(first == [.created("/w/before")])
        let second = pairing.add(
            [.init(watch: folder, mask: .movedTo, cookie: 9, name: "b"), .init(watch: folder, mask: .closeWrite, name: "b")],
            at: start + .milliseconds(1), directory: directory)
        #expect(second == [.moved(from: "/w/a", to: "/w/b"), .created("/w/a"), .modified("/w/b")])
    }

    @Test func anOverflowEndsEveryWait() {
        var pairing = InotifyMovePairing(window: .milliseconds(50))
        _ = pairing.add([.init(watch: folder, mask: .movedFrom, cookie: 10, name: "a")], at: start, directory: directory)
        let overflow = pairing.add([.init(watch: .init(rawValue: -1), mask: .queueOverflow)], at: start, directory: directory)
        #expect(overflow == [.movedOut("/w/a"), .overflow])
        #expect(pairing.deadline == nil)
    }

    @Test func dropsWhatNamesNothingWatched() {
        var pairing = InotifyMovePairing(window: .milliseconds(50))
        let events = pairing.add(
            [
                .init(watch: folder, mask: [.attributes, .isDirectory]),  // the watched folder itself
                .init(watch: .init(rawValue: 3), mask: .create, name: "x"),  // a watch no longer known
                .init(watch: folder, mask: .ignored),
                .init(watch: folder, mask: [.delete, .isDirectory], name: "d"),
            ], at: start, directory: directory)
        #expect(events == [.deleted("/w/d")])
    }
}
