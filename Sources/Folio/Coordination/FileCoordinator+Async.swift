public import Foundation

extension FileCoordinator {
    /// Coordinates every intent at once, without blocking: `accessor` runs exactly once on `queue`,
    /// with nil once all claims are granted (use each intent's `url`, which follows moves made while
    /// waiting) or with the error. Pass all intents in one call rather than calling this
    /// concurrently: separate calls can deadlock across processes.
    public func coordinate(
        with intents: [FileAccessIntent], queue: OperationQueue, byAccessor accessor: @escaping @Sendable ((any Error)?) -> Void
    ) {
        guard !intents.isEmpty else {
            queue.addOperation { accessor(nil) }
            return
        }
        let items = intents.map { Requested(url: $0.url, access: $0.access) }
        acquire(items, multiItem: true) { [self] result in
            switch result {
            case .failure(let error):
                queue.addOperation { accessor(error) }
            case .success(let granted):
                for (intent, url) in zip(intents, granted.urls) { intent.update(url) }
                queue.addOperation {
                    accessor(nil)
                    self.finish(granted)
                }
            }
        }
    }

    /// Reads the item at `url` under coordination, without blocking a thread; the claim is held
    /// while `reader` runs. Task cancellation while waiting cancels the coordination
    /// (`CocoaError.userCancelled`).
    public func coordinate<T>(
        readingItemAt url: URL, options: ReadingOptions = [], byAccessor reader: (URL) async throws -> T
    ) async throws -> T {
        if options.contains(.forUploading) {
            let granted = try await acquireAsync([Requested(url: url, access: .read(options))], multiItem: false)
            let snapshot: UploadSnapshot
            do {
                defer { finish(granted) }
                snapshot = try UploadSnapshot(of: granted.urls[0])
            }
            defer { snapshot.remove() }
            return try await reader(snapshot.url)
        }
        let granted = try await acquireAsync([Requested(url: url, access: .read(options))], multiItem: false)
        defer { finish(granted) }
        return try await reader(granted.urls[0])
    }

    /// Writes the item at `url` under coordination, without blocking a thread.
    public func coordinate<T>(
        writingItemAt url: URL, options: WritingOptions = [], byAccessor writer: (URL) async throws -> T
    ) async throws -> T {
        let granted = try await acquireAsync([Requested(url: url, access: .write(options))], multiItem: false)
        defer { finish(granted) }
        return try await writer(granted.urls[0])
    }

    /// Reads one item and writes another under one atomic claim, without blocking a thread.
    public func coordinate<T>(
        readingItemAt readingURL: URL, options readingOptions: ReadingOptions = [], writingItemAt writingURL: URL,
        options writingOptions: WritingOptions = [], byAccessor readerWriter: (URL, URL) async throws -> T
    ) async throws -> T {
        let granted = try await acquireAsync(
            [Requested(url: readingURL, access: .read(readingOptions)), Requested(url: writingURL, access: .write(writingOptions))],
            multiItem: true)
        defer { finish(granted) }
        return try await readerWriter(granted.urls[0], granted.urls[1])
    }

    /// Writes two items under one atomic claim, without blocking a thread.
    public func coordinate<T>(
        writingItemAt url1: URL, options options1: WritingOptions = [], writingItemAt url2: URL,
        options options2: WritingOptions = [], byAccessor writer: (URL, URL) async throws -> T
    ) async throws -> T {
        let granted = try await acquireAsync(
            [Requested(url: url1, access: .write(options1)), Requested(url: url2, access: .write(options2))], multiItem: true)
        defer { finish(granted) }
        return try await writer(granted.urls[0], granted.urls[1])
    }

    /// Coordinates every intent at once and runs `body` while the claims are held, without
    /// blocking a thread; the intents' URLs are current inside.
    public func coordinate<T>(with intents: [FileAccessIntent], byAccessor body: () async throws -> T) async throws -> T {
        guard !intents.isEmpty else { return try await body() }
        let granted = try await acquireAsync(intents.map { Requested(url: $0.url, access: $0.access) }, multiItem: true)
        defer { finish(granted) }
        for (intent, url) in zip(intents, granted.urls) { intent.update(url) }
        return try await body()
    }

    /// The synchronous `.forUploading` read: snapshot under the claim, release, then read the
    /// snapshot, which is removed afterwards.
    func coordinateForUploading(_ url: URL, options: ReadingOptions, _ reader: (URL) -> Void) throws {
        let granted = try acquire([Requested(url: url, access: .read(options))], multiItem: false)
        let snapshot: UploadSnapshot
        do {
            defer { finish(granted) }
            snapshot = try UploadSnapshot(of: granted.urls[0])
        }
        defer { snapshot.remove() }
        reader(snapshot.url)
    }
}
