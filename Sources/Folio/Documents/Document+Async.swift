public import Foundation

extension Document {
    // Each is `@discardableResult`, as Swift imports every Objective-C method (UIDocument's
    // async forms too): `await document.close()` as a statement is Apple code, and compiles here
    // without a warning.

    /// Opens the document; returns whether it worked.
    @discardableResult
    public func open() async -> Bool {
        await withCheckedContinuation { continuation in open { continuation.resume(returning: $0) } }
    }

    /// Saves the document to `url`; returns whether it worked.
    @discardableResult
    public func save(to url: URL, for saveOperation: SaveOperation) async -> Bool {
        await withCheckedContinuation { continuation in save(to: url, for: saveOperation) { continuation.resume(returning: $0) } }
    }

    /// Saves unsaved changes, if any; returns whether that worked.
    @discardableResult
    public func autosave() async -> Bool {
        await withCheckedContinuation { continuation in autosave { continuation.resume(returning: $0) } }
    }

    /// Saves unsaved changes and closes; returns whether saving worked.
    @discardableResult
    public func close() async -> Bool {
        await withCheckedContinuation { continuation in close { continuation.resume(returning: $0) } }
    }

    /// Drops unsaved changes and loads `url`; returns whether it worked.
    @discardableResult
    public func revert(toContentsOf url: URL) async -> Bool {
        await withCheckedContinuation { continuation in revert(toContentsOf: url) { continuation.resume(returning: $0) } }
    }
}
