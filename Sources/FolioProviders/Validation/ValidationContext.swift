import Crypto
import Folio
import Foundation

/// What the cases share: the provider, a request, the scratch folder, and helpers that create, read
/// and check items.
final class ValidationContext: Sendable {
    let provider: any FileProvider
    let request: FileProviderRequest
    let options: ProviderValidation.Options
    /// The scratch folder every case works in.
    let scratch: FileProviderItemIdentifier
    let temporaryDirectory: URL

    private init(
        provider: any FileProvider, request: FileProviderRequest, options: ProviderValidation.Options, scratch: FileProviderItemIdentifier
    ) {
        self.provider = provider
        self.request = request
        self.options = options
        self.scratch = scratch
        self.temporaryDirectory = request.temporaryDirectory
    }

    static func make(provider: any FileProvider, temporaryDirectory: URL, options: ProviderValidation.Options) async throws
        -> ValidationContext
    {
        try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
        let request = FileProviderRequest(isSystemRequest: true, temporaryDirectory: temporaryDirectory)
        // The root must list first: a server that cannot (not WebDAV, no such bucket, wrong password)
        // is one refusal, in its own words, rather than every case failing alike.
        _ = try await provider.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: request)
        let name = "folio-validation-\(UUID().uuidString.prefix(8).lowercased())"
        let template = FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier("new-\(name)"), parentItemIdentifier: .rootContainer, filename: name,
            contentType: .folder)
        let result = try await provider.createItem(basedOn: template, fields: [.filename, .parentItemIdentifier], contents: nil, options: [], request: request)
        guard let folder = result.item else { throw ValidationFailure(message: "the provider refused to create the scratch folder") }
        return ValidationContext(provider: provider, request: request, options: options, scratch: folder.itemIdentifier)
    }

    func cleanUp() async {
        _ = try? await provider.deleteItem(identifier: scratch, baseVersion: FileProviderItemVersion(), options: .recursive, request: request)
    }

    // MARK: Making items

    /// Creates a folder named `name` in `parent` (the scratch folder by default).
    func makeFolder(_ name: String, in parent: FileProviderItemIdentifier? = nil) async throws -> FileProviderItemRecord {
        let template = FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier("new-\(UUID().uuidString)"), parentItemIdentifier: parent ?? scratch, filename: name,
            contentType: .folder)
        let result = try await provider.createItem(basedOn: template, fields: [.filename, .parentItemIdentifier], contents: nil, options: [], request: request)
        return try require(result.item, "creating folder “\(name)” returned no item")
    }

    /// Creates a file named `name` holding `data` in `parent` (the scratch folder by default).
    func makeFile(_ name: String, _ data: Data, in parent: FileProviderItemIdentifier? = nil) async throws -> FileProviderItemRecord {
        let source = try writeTemporary(data)
        defer { try? FileManager.default.removeItem(at: source) }
        return try await makeFile(name, from: source, in: parent)
    }

    /// Creates a file named `name` from the file at `source`.
    func makeFile(_ name: String, from source: URL, in parent: FileProviderItemIdentifier? = nil) async throws -> FileProviderItemRecord {
        let template = FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier("new-\(UUID().uuidString)"), parentItemIdentifier: parent ?? scratch, filename: name,
            contentType: .data)
        let result = try await provider.createItem(
            basedOn: template, fields: [.contents, .filename, .parentItemIdentifier], contents: source, options: [], request: request)
        let item = try require(result.item, "creating “\(name)” returned no item")
        try expect(item.itemVersion.isWellFormed, "“\(name)”: a version component is longer than 128 bytes")
        return item
    }

    /// Replaces the content of `item`, made against `base`.
    func write(_ data: Data, to item: FileProviderItemRecord, base: FileProviderItemVersion) async throws -> FileProviderItemRecord {
        let source = try writeTemporary(data)
        defer { try? FileManager.default.removeItem(at: source) }
        let result = try await provider.modifyItem(item, baseVersion: base, changedFields: .contents, contents: source, options: [], request: request)
        return try require(result.item, "modifying “\(item.filename)” returned no item")
    }

    /// Renames and/or moves `item`.
    func move(_ item: FileProviderItemRecord, to name: String? = nil, into parent: FileProviderItemIdentifier? = nil) async throws
        -> FileProviderItemRecord
    {
        var changed = item
        var fields: FileProviderItemFields = []
        if let name {
            changed.filename = name
            fields.insert(.filename)
        }
        if let parent {
            changed.parentItemIdentifier = parent
            fields.insert(.parentItemIdentifier)
        }
        let result = try await provider.modifyItem(changed, baseVersion: item.itemVersion, changedFields: fields, contents: nil, options: [], request: request)
        return try require(result.item, "moving “\(item.filename)” returned no item")
    }

    // MARK: Reading

    /// The item `identifier` as the provider describes it now.
    func item(_ identifier: FileProviderItemIdentifier) async throws -> FileProviderItemRecord {
        FileProviderItemRecord(try await provider.item(for: identifier, request: request))
    }

    /// The content of `identifier`, fetched through the provider; the fetched file is removed.
    func content(of identifier: FileProviderItemIdentifier) async throws -> Data {
        let (url, _) = try await provider.fetchContents(for: identifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
        defer { try? FileManager.default.removeItem(at: url) }
        return try Data(contentsOf: url)
    }

    /// Every item of `folder`, page by page, checking each page's size.
    func list(_ folder: FileProviderItemIdentifier) async throws -> [FileProviderItemRecord] {
        var items: [FileProviderItemRecord] = []
        var page = FileProviderPage.initialPageSortedByName
        for _ in 0..<100_000 {
            let found = try await provider.enumerateItems(in: folder, startingAt: page, request: request)
            items += found.items.map(FileProviderItemRecord.init)
            guard let next = found.nextPage else { return items }
            try expect(next.rawValue.count <= FileProviderPage.maximumLength, "a page is \(next.rawValue.count) bytes, over 500")
            try expect(next != page, "the provider returned the same page twice")
            page = next
        }
        throw ValidationFailure(message: "the enumeration of \(folder) did not end")
    }

    /// The names in `folder`.
    func names(in folder: FileProviderItemIdentifier? = nil) async throws -> [String] {
        try await list(folder ?? scratch).map(\.filename)
    }

    // MARK: Checks

    func writeTemporary(_ data: Data) throws -> URL {
        let url = temporaryDirectory.appendingPathComponent("source-\(UUID().uuidString)")
        try data.write(to: url)
        return url
    }

    /// Runs `body` and requires it to throw a provider error with `code`.
    func expectError<T>(_ code: FileProviderError.Code, _ what: String, _ body: () async throws -> T) async throws {
        do {
            _ = try await body()
        } catch let error as FileProviderError {
            try expect(error.code == code, "\(what): expected \(code), got \(error.code)")
            return
        } catch {
            throw ValidationFailure(message: "\(what): expected \(code), got \(error)")
        }
        throw ValidationFailure(message: "\(what): expected \(code), but it succeeded")
    }

    /// Runs `body` and requires it to throw some error.
    func expectRefusal<T>(_ what: String, _ body: () async throws -> T) async throws {
        do {
            _ = try await body()
        } catch {
            return
        }
        throw ValidationFailure(message: "\(what): expected a refusal, but it succeeded")
    }
}

/// Fails the case with `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw ValidationFailure(message: message()) }
}

/// The item, or a failure with `message`.
func require(_ value: (any FileProviderItem)?, _ message: @autoclosure () -> String) throws -> FileProviderItemRecord {
    guard let value else { throw ValidationFailure(message: message()) }
    return FileProviderItemRecord(value)
}

/// Deterministic bytes of `count` (so two sizes never share content by accident).
func pattern(_ count: Int, seed: UInt8 = 0) -> Data {
    var data = Data(count: count)
    data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
        for index in 0..<count { raw[index] = UInt8(truncatingIfNeeded: index &* 31 &+ Int(seed) &* 7 &+ index >> 8) }
    }
    return data
}

/// The SHA-256 of `data`.
func digest(_ data: Data) -> Data { Data(SHA256.hash(data: data)) }
