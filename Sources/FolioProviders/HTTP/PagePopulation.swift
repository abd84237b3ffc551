#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Dispatch
import NIOPosix
import Synchronization

/// Makes a shared file mapping's pages ready to write, from its end backwards, on the file-work
/// pool, while its receiver fills it from its start: the two meet in the middle. A page's first
/// touch is the dear part of receiving into a new file (the kernel clears it; on a virtual machine
/// that backs its memory lazily, the host first finds memory for it: a third of a processor's
/// second per 512 MiB measured here), and this way two processors take it rather than one.
final class PagePopulation: Sendable {
    /// The mapping's address and length (page-aligned start).
    private let base: UInt
    private let count: Int
    /// How far the receiver has come: nothing below it is populated again.
    private let reached = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// `MADV_POPULATE_WRITE` (Linux 5.14), which Glibc's headers here may not name.
    static let populateWrite: Int32 = 23
    /// The bytes made ready by each call, between looks at how far the receiver has come.
    static let step = 4 << 20

    /// Starts on the mapping at `mapping` (as `mmap` returned it).
    init(_ mapping: UnsafeMutableRawBufferPointer) {
        base = UInt(bitPattern: mapping.baseAddress)
        count = mapping.count
        ProviderFileWork.pool.submit { [self] _ in
            populate()
            done.signal()
        }
    }

    /// The receiver has filled the mapping up to `offset`.
    func receiverReached(_ offset: Int) {
        reached.store(offset, ordering: .relaxed)
    }

    /// Stops (at the end of its current step) and waits for that, at most 10 s: the mapping may
    /// be unmapped once this returns. A step past the wait finds its range unmapped, or a new
    /// mapping of this process's there whose pages it only makes ready (it writes nothing).
    func finish() {
        stopped.store(true, ordering: .relaxed)
        _ = done.wait(timeout: .now() + .seconds(10))
    }

    private func populate() {
        var step = (count - 1) / Self.step
        while step >= 0, !stopped.load(ordering: .relaxed) {
            let start = step * Self.step
            guard start > reached.load(ordering: .relaxed) else { return }
            _ = madvise(UnsafeMutableRawPointer(bitPattern: base + UInt(start)), min(Self.step, count - start), Self.populateWrite)
            step -= 1
        }
    }
}
