package import Foundation

extension FileProviderRequest {
    /// A new path in ``temporaryDirectory`` for a fetched file: made from a string, since a file
    /// URL made from a path reads the file system to learn whether it names a folder.
    package func fetchDestination() -> String {
        temporaryDirectory.path + "/fetch-" + UniqueIdentifier.next()
    }
}
