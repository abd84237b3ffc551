import Foundation

/// Polls `condition` for up to `seconds`, suspending between polls so that a loaded machine's few
/// cooperative threads stay free for the work being waited on; true as soon as it holds. The
/// default is long: with a whole suite running on two cores, the work waited for can be delayed
/// many seconds, and a wait that succeeds returns at once.
public func eventually(_ seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
