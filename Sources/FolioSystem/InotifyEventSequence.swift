#if os(Linux)
import Foundation

/// The batches of an `InotifyWatcher`, as an asynchronous sequence. Each element is what one read
/// of the kernel's queue held, in the kernel's order, with renames paired (a batch may also carry
/// events held back from the previous read while a rename's first half waited for its second).
///
/// Back-pressure: the watcher's thread reads the kernel's queue again only while fewer than
/// `InotifyWatcher.bufferedBatches` batches wait here; past that, events wait in the kernel's
/// queue, and when it overflows the kernel drops them and a later batch holds `.overflow`.
///
/// One consumer: iterate it once. The sequence ends when the watcher stops; ending the iteration
/// (leaving the loop, or cancelling its task) stops the watcher.
public struct InotifyEventSequence: AsyncSequence, Sendable {
    /// A batch of events.
    public typealias Element = [InotifyWatcher.Event]
    /// The sequence never fails: read errors are logged, and end it.
    public typealias Failure = Never

    /// Counts the batches the consumer has not taken yet, and holds the watcher's thread while
    /// there are too many.
    final class Credit: @unchecked Sendable {
        private let condition = NSCondition()
        private let limit: Int
        private var waiting = 0
        private var isClosed = false

        init(limit: Int) {
            self.limit = limit
        }

        /// Counts a batch handed to the stream, then waits (on the watcher's thread) while the
        /// consumer has `limit` batches to take. False once closed: nobody takes batches any more.
        ///
        /// The wait lasts as long as the consumer takes: that is the back-pressure. Closing (the
        /// watcher stops, or the iteration ends) wakes it.
        func sent() -> Bool {
            condition.lock()
            defer { condition.unlock() }
            waiting += 1
            while waiting >= limit && !isClosed { condition.wait() }
            return !isClosed
        }

        /// Counts a batch the consumer took.
        func taken() {
            condition.lock()
            waiting -= 1
            condition.signal()
            condition.unlock()
        }

        /// Wakes the watcher's thread for good.
        func close() {
            condition.lock()
            isClosed = true
            condition.broadcast()
            condition.unlock()
        }
    }

    let stream: AsyncStream<Element>
    let credit: Credit?

    /// Returns the iterator; call it once.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), credit: credit)
    }

    /// Takes the batches one by one.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.Iterator
        let credit: Credit?

        /// Returns the next batch, waiting for it; nil once the watcher stopped (or the task was
        /// cancelled).
        public mutating func next() async -> Element? {
            let batch = await base.next()
            if batch != nil { credit?.taken() }
            return batch
        }
    }
}

@available(*, unavailable)
extension InotifyEventSequence.AsyncIterator: Sendable {}
#endif
