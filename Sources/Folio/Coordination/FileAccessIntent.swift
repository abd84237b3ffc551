public import Foundation

/// One item of an asynchronous coordination (Apple's `NSFileAccessIntent`). Its `url` follows moves
/// made by other writers while the coordination waits; use it, not the URL you started with, inside
/// the accessor.
public final class FileAccessIntent: @unchecked Sendable {
    private let lock = NSLock()
    private var currentURL: URL
    let access: ClaimAccess

    /// The item's URL: the one given, or where another writer moved it while this waited.
    public var url: URL {
        lock.lock()
        defer { lock.unlock() }
        return currentURL
    }

    private init(url: URL, access: ClaimAccess) {
        currentURL = url
        self.access = access
    }

    /// An intent to read the item at `url`.
    public static func readingIntent(with url: URL, options: FileCoordinator.ReadingOptions = []) -> FileAccessIntent {
        FileAccessIntent(url: url, access: .read(options))
    }

    /// An intent to write the item at `url`.
    public static func writingIntent(with url: URL, options: FileCoordinator.WritingOptions = []) -> FileAccessIntent {
        FileAccessIntent(url: url, access: .write(options))
    }

    func update(_ url: URL) {
        lock.lock()
        currentURL = url
        lock.unlock()
    }
}
