import Foundation

/// Programs that do not coordinate (any program opening a file through the drive's mount) still
/// wait for coordinated writers: an open waits while another process's granted write holds the
/// file, so a coordinated writer's reader never sees its work half done.
extension CoordinationArbiter {
    /// Whether a granted coordinated write of a process other than `process` holds `path` against
    /// a reader (the file itself, a package it is in, or a folder above it moved or deleted).
    package func writeHolds(_ path: String, against process: Int32) -> Bool {
        perform { state in
            guard state.queue.contains(where: { $0.phase == .granted }) else { return false }
            let item = ItemState(path: path, access: .read([]), key: conflictKey(path, &state))
            return isHeld(item, against: process, state)
        }
    }

    /// Waits until no granted write of another process than `process` holds `path` (see
    /// ``writeHolds(_:against:)``), or until `deadline` passes: true when the writes ended, false at
    /// the deadline. A cancelled wait ends at once, false.
    package func afterWrites(to path: String, against process: Int32, deadline: Duration) async -> Bool {
        let number = perform { state -> UInt64 in
            state.nextProgramOpen += 1
            return state.nextProgramOpen
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let ended = perform { state -> Bool in
                    let item = ItemState(path: path, access: .read([]), key: conflictKey(path, &state))
                    guard isHeld(item, against: process, state), !Task.isCancelled else { return true }
                    state.programOpens[number] = ProgramOpen(item: item, process: process) { continuation.resume(returning: $0) }
                    return false
                }
                if ended { return continuation.resume(returning: !Task.isCancelled) }
                scheduleWork(deadline) { [weak self] in self?.endProgramOpen(number) }
            }
        } onCancel: {
            endProgramOpen(number)
        }
    }

    /// Ends a program's open's wait, unanswered: false.
    private func endProgramOpen(_ number: UInt64) {
        perform { state in state.programOpens.removeValue(forKey: number) }?.proceed(false)
    }

    /// Lets go the opens no granted write holds any longer (a claim ended).
    func admitProgramOpens(_ state: inout ArbiterState) {
        for (number, open) in state.programOpens where !isHeld(open.item, against: open.process, state) {
            state.programOpens[number] = nil
            // Resuming a continuation only schedules its task: safe under the lock.
            open.proceed(true)
        }
    }

    private func isHeld(_ item: ItemState, against process: Int32, _ state: ArbiterState) -> Bool {
        state.queue.contains { claim in
            claim.phase == .granted && state.clients[claim.key.client]?.pid != process
                && claim.items.contains { $0.access.isWrite && itemsConflict($0, item) }
        }
    }
}
