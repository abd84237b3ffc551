import Folio
import Foundation
import Synchronization

/// The document picker's front end in the browser page: the open page shows each app's request
/// (`GET /api/picker` lists those still open) and answers with `POST /api/picker/choose`; the
/// daemon checks and carries out the choice as for any front end (`PickerService`).
final class WebPicker: PickerPage, @unchecked Sendable {
    weak var changes: WebChanges?
    /// The requests shown, by number, as the picker's events describe them.
    private let shown = Mutex<[UInt64: WireValue]>([:])

    func present(_ number: UInt64, _ event: WireValue) {
        shown.withLock { $0[number] = event }
        changes?.publish(.picker)
    }

    func withdraw() {
        changes?.publish(.picker)
    }

    /// The requests still open, oldest first (answered or dropped ones are forgotten here).
    func open(in service: PickerService) -> [WireValue] {
        shown.withLock { shown in
            shown = shown.filter { service.pendingRequest($0.key) != nil }
            return shown.sorted { $0.key < $1.key }.map(\.value)
        }
    }
}
