import Folio
import FolioTestTraits
import Foundation
import Testing

/// A document that overrides the presenter members `UIDocument` subclasses override: each call
/// is recorded, so a test sees which implementation the coordinator's dispatch reached.
final class SubtitledFilm: Document, @unchecked Sendable {
    let film: URL
    private let lock = NSLock()
    private var heard: [String] = []
    var calls: [String] { lock.withLock { heard } }

    init(subtitles: URL, film: URL) {
        self.film = film
        super.init(fileURL: subtitles)
    }

    private func note(_ call: String) { lock.withLock { heard.append(call) } }

    override var primaryPresentedItemURL: URL? { film }
    override var observedPresentedItemUbiquityAttributes: Set<URLResourceKey> { [.ubiquitousItemIsUploadedKey] }
    override func presentedItemDidChangeUbiquityAttributes(_ attributes: Set<URLResourceKey>) { note("ubiquity \(attributes.count)") }
    override func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        note("reader")
        super.relinquishPresentedItem(toReader: reader)
    }
    override func presentedSubitemDidChange(at url: URL) { note("subitem \(url.lastPathComponent)") }
    override func presentedItemDidChange() { note("changed") }
}

/// A package document that overrides only `presentedItemDidChange`, as most do.
final class PackageNotes: Document, @unchecked Sendable {
    private let lock = NSLock()
    private var changes = 0
    var changed: Int { lock.withLock { changes } }
    override func presentedItemDidChange() { lock.withLock { changes += 1 } }
}

@Suite("Document: presenter members a subclass overrides", .elasticPool)
struct DocumentPresenterOverrideTests {
    /// Every `FilePresenter` member is `Document`'s own, so a subclass's override is what a
    /// coordinator (which holds the document as `any FilePresenter`) calls; what a subclass does not
    /// override does what a presenter without the member gets.
    @Test func overridesAreWhatACoordinatorReaches() {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("overrides-\(UUID().uuidString)")
        let film = SubtitledFilm(subtitles: folder.appendingPathComponent("film.srt"), film: folder.appendingPathComponent("film.mkv"))
        let presenter: any FilePresenter = film
        #expect(presenter.primaryPresentedItemURL == folder.appendingPathComponent("film.mkv"))
        #expect(presenter.observedPresentedItemUbiquityAttributes == [.ubiquitousItemIsUploadedKey])
        presenter.presentedItemDidChangeUbiquityAttributes([.ubiquitousItemIsUploadedKey])
        let relinquished = NSLock()
        nonisolated(unsafe) var readerCalled = false
        presenter.relinquishPresentedItem(toReader: { _ in relinquished.withLock { readerCalled = true } })
        presenter.presentedSubitemDidChange(at: folder.appendingPathComponent("inside.txt"))
        #expect(film.calls == ["ubiquity 1", "reader", "subitem inside.txt"])
        #expect(relinquished.withLock { readerCalled })

        // Not overridden: a package's document hears a change inside as a change of itself; a
        // plain file's does not.
        let package = PackageNotes(fileURL: folder.appendingPathComponent("Notes.rtfd"))
        let packagePresenter: any FilePresenter = package
        packagePresenter.presentedSubitemDidAppear(at: folder.appendingPathComponent("Notes.rtfd/TXT.rtf"))
        packagePresenter.presentedSubitemDidChange(at: folder.appendingPathComponent("Notes.rtfd/TXT.rtf"))
        #expect(package.changed == 2)
        let plain = PackageNotes(fileURL: folder.appendingPathComponent("notes.txt"))
        (plain as any FilePresenter).presentedSubitemDidChange(at: folder.appendingPathComponent("notes.txt"))
        #expect(plain.changed == 0)
        #expect(packagePresenter.primaryPresentedItemURL == nil && packagePresenter.observedPresentedItemUbiquityAttributes.isEmpty)
    }
}
