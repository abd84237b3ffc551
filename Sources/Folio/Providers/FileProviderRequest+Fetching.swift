import Foundation
import Synchronization

extension FileProviderRequest {
    /// A new path in ``temporaryDirectory`` for a fetched file, in one of its ``fetchFolders``
    /// when the caller made them (in turn), else directly in it: made from a string, since a file
    /// URL made from a path reads the file system to learn whether it names a folder.
    package func fetchDestination() -> String {
        guard fetchFolders > 0 else { return temporaryDirectory.path + "/fetch-" + UniqueIdentifier.next() }
        let folder = FetchFolders.turn.add(1, ordering: .relaxed).oldValue % fetchFolders
        return temporaryDirectory.path + "/" + Self.fetchFolderName(folder) + "/" + UniqueIdentifier.next()
    }

    /// The name of fetch folder `index` in ``temporaryDirectory``.
    package static func fetchFolderName(_ index: Int) -> String { "fetched-\(index)" }
}

/// Whose turn it is among the fetch folders, for every request of the process.
private enum FetchFolders {
    static let turn = Atomic<Int>(0)
}
