public import Foundation
import UniformTypes

/// An object that shows a file or directory to the user and wants to hear when coordinated access
/// by others needs it to step aside, save, or follow a change (Apple's `NSFilePresenter`).
///
/// Register presenters with `FileCoordinator.addFilePresenter(_:)` and remove them before they go
/// away. Every message arrives on `presentedItemOperationQueue`. Apple's optional members have
/// default implementations here that do what Apple does when a presenter lacks them.
///
/// Beyond Apple, writes made *without* coordination (a shell's `echo >`, an editor that saves by
/// rename) are noticed and reported through the same change and move messages, so a presenter never
/// keeps showing stale content unknowingly.
public protocol FilePresenter: AnyObject {
    /// The presented item; nil when it does not exist yet. Read at any time, on any queue.
    var presentedItemURL: URL? { get }
    /// The queue every other message is delivered on. Avoid the main queue: a synchronous
    /// coordination on the main thread would deadlock.
    var presentedItemOperationQueue: OperationQueue { get }
    /// For a secondary item (subtitles beside a film): the primary item the user chose.
    var primaryPresentedItemURL: URL? { get }

    /// Another process wants to read: stop writing, then call `reader`, optionally passing a
    /// reacquirer that runs on this queue when the read is done. Always call `reader`.
    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void)
    /// Another process wants to write: stop reading and writing, then call `writer`, optionally
    /// passing a reacquirer. Always call `writer`.
    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void)
    /// Write unsaved changes, then call the handler with nil or an error (which fails the
    /// coordination that asked). Presenters without unsaved changes call it with nil.
    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void)
    /// The item is about to be deleted: prepare (a document closes), then call the handler; an
    /// error aborts the deletion.
    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void)
    /// The Drive is about to evict the item's local copy (it stays on the server): make sure the
    /// eviction can succeed — this includes `FileCoordinator.removeFilePresenter(_:)` — then call
    /// the handler; an error prevents the eviction. A presenter that does not implement it
    /// prevents it, as on Apple's systems.
    func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void)
    /// The item, or a folder containing it, moved; `presentedItemURL` should now return `newURL`.
    func presentedItemDidMove(to newURL: URL)
    /// The item's contents or attributes changed (files and packages).
    func presentedItemDidChange()
    /// Ubiquity attributes in `observedPresentedItemUbiquityAttributes` changed.
    func presentedItemDidChangeUbiquityAttributes(_ attributes: Set<URLResourceKey>)
    /// The ubiquity attributes this presenter wants to hear about.
    var observedPresentedItemUbiquityAttributes: Set<URLResourceKey> { get }
    /// A version of the item appeared (a conflict, say).
    func presentedItemDidGain(_ version: FileVersion)
    /// A version of the item went away.
    func presentedItemDidLose(_ version: FileVersion)
    /// A conflict version of the item was resolved.
    func presentedItemDidResolveConflict(_ version: FileVersion)

    /// Directory presenters: an item inside (at any depth) is about to be deleted.
    func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void)
    /// Directory presenters: an item appeared inside.
    func presentedSubitemDidAppear(at url: URL)
    /// Directory presenters: an item inside moved.
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL)
    /// Directory presenters: an item inside changed.
    func presentedSubitemDidChange(at url: URL)
    /// Directory presenters: an item inside gained a version.
    func presentedSubitem(at url: URL, didGain version: FileVersion)
    /// Directory presenters: an item inside lost a version.
    func presentedSubitem(at url: URL, didLose version: FileVersion)
    /// Directory presenters: a conflict of an item inside was resolved.
    func presentedSubitem(at url: URL, didResolve version: FileVersion)
}

/// Apple's behaviour for presenters that lack an optional member.
extension FilePresenter {
    /// No primary item.
    public var primaryPresentedItemURL: URL? { nil }
    /// Relinquishes at once, with no reacquirer.
    public func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        reader(nil)
    }
    /// Relinquishes at once, with no reacquirer.
    public func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        writer(nil)
    }
    /// Never has unsaved changes.
    public func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// Lets the deletion go ahead.
    public func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// Prevents the eviction (Apple: "If this method is not implemented, eviction will fail").
    public func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "a presenter of the item does not accommodate its eviction"]))
    }
    /// Ignores the move.
    public func presentedItemDidMove(to newURL: URL) {}
    /// Ignores the change.
    public func presentedItemDidChange() {}
    /// Ignores the change.
    public func presentedItemDidChangeUbiquityAttributes(_ attributes: Set<URLResourceKey>) {}
    /// Observes no ubiquity attributes.
    public var observedPresentedItemUbiquityAttributes: Set<URLResourceKey> { [] }
    /// Ignores the version.
    public func presentedItemDidGain(_ version: FileVersion) {}
    /// Ignores the version.
    public func presentedItemDidLose(_ version: FileVersion) {}
    /// Ignores the resolution.
    public func presentedItemDidResolveConflict(_ version: FileVersion) {}
    /// Lets the deletion go ahead.
    public func accommodatePresentedSubitemDeletion(
        at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        completionHandler(nil)
    }
    /// Apple's fallback: a package's presenter without this method hears `presentedItemDidChange`.
    public func presentedSubitemDidAppear(at url: URL) { changeOfPackageContents() }
    /// Apple's fallback: a package's presenter without this method hears `presentedItemDidChange`.
    public func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) { changeOfPackageContents() }
    /// Apple's fallback: a package's presenter without this method hears `presentedItemDidChange`.
    public func presentedSubitemDidChange(at url: URL) { changeOfPackageContents() }
    /// Ignores the version.
    public func presentedSubitem(at url: URL, didGain version: FileVersion) {}
    /// Ignores the version.
    public func presentedSubitem(at url: URL, didLose version: FileVersion) {}
    /// Ignores the resolution.
    public func presentedSubitem(at url: URL, didResolve version: FileVersion) {}

    /// A package's presenter hears a change inside as `presentedItemDidChange` (Apple's fallback).
    func changeOfPackageContents() {
        guard let url = presentedItemURL, UTType.isPackageExtension(url.pathExtension) else { return }
        presentedItemDidChange()
    }
}
