public import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

#if !canImport(Darwin)
/// A file, folder or symbolic link held in memory (Apple's `FileWrapper`, which Foundation lacks on
/// Linux): how a `Document` stored as a package (a folder shown as one document) is loaded and saved.
open class FileWrapper: @unchecked Sendable {
    /// Options for reading a wrapper from disk.
    public struct ReadingOptions: OptionSet, Sendable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Read contents at once (they always are here).
        public static let immediate = ReadingOptions(rawValue: 1 << 0)
        /// Read without memory mapping (always, here).
        public static let withoutMapping = ReadingOptions(rawValue: 1 << 1)
    }

    /// Options for writing a wrapper to disk.
    public struct WritingOptions: OptionSet, Sendable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Write to a temporary place and move it into place when complete.
        public static let atomic = WritingOptions(rawValue: 1 << 0)
        /// Update the wrappers' `filename`s to what was written.
        public static let withNameUpdating = WritingOptions(rawValue: 1 << 1)
    }

    enum Kind {
        case regular(Data)
        case directory([String: FileWrapper])
        case link(URL)
    }

    private(set) var kind: Kind
    /// The name the wrapper would like inside its parent folder.
    open var preferredFilename: String?
    /// The name it has on disk (set when read or written with name updating).
    open var filename: String?
    /// POSIX attributes to write (`.posixPermissions`, `.modificationDate`).
    open var fileAttributes: [String: Any] = [:]

    /// A regular file holding `contents`.
    public init(regularFileWithContents contents: Data) {
        kind = .regular(contents)
    }

    init(kind: Kind) {
        self.kind = kind
    }

    /// A folder holding `childrenByPreferredName`.
    public init(directoryWithFileWrappers childrenByPreferredName: [String: FileWrapper]) {
        var children: [String: FileWrapper] = [:]
        for (name, child) in childrenByPreferredName {
            child.preferredFilename = child.preferredFilename ?? name
            children[name] = child
        }
        kind = .directory(children)
    }

    /// A symbolic link to `url`.
    public init(symbolicLinkWithDestinationURL url: URL) {
        kind = .link(url)
    }

    /// The wrapper `serializedRepresentation` describes, or nil when the bytes are not one
    /// (Apple's `init?(serializedRepresentation:)`).
    public init?(serializedRepresentation: Data) {
        guard let root = FileWrapperSerialization.decode(serializedRepresentation) else { return nil }
        kind = root.kind
        preferredFilename = root.preferredFilename
        fileAttributes = root.fileAttributes
    }

    /// The wrapper as bytes, to put on a pasteboard or in a drag (Apple's
    /// `serializedRepresentation`), read back by `init?(serializedRepresentation:)`. Apple's format
    /// is private; Folio's is documented at `FileWrapperSerialization`.
    open var serializedRepresentation: Data? { FileWrapperSerialization.encode(self) }

    /// Reads the file, folder (recursively) or link at `url`.
    ///
    /// - Throws: `CocoaError.fileReadNoSuchFile` or `.fileReadNoPermission`, or the read's error.
    public init(url: URL, options: ReadingOptions = []) throws {
        kind = try Self.read(url)
        filename = url.lastPathComponent
        preferredFilename = url.lastPathComponent
    }

    private static func read(_ url: URL) throws -> Kind {
        var status = stat()
        guard lstat(url.path, &status) == 0 else {
            let code: CocoaError.Code = errno == EACCES ? .fileReadNoPermission : .fileReadNoSuchFile
            throw CocoaError(code, userInfo: [NSFilePathErrorKey: url.path])
        }
        switch status.st_mode & S_IFMT {
        case S_IFDIR:
            var children: [String: FileWrapper] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
                let child = try FileWrapper(url: url.appendingPathComponent(name))
                children[name] = child
            }
            return .directory(children)
        case S_IFLNK:
            let destination = try FileManager.default.destinationOfSymbolicLink(atPath: url.path)
            return .link(URL(fileURLWithPath: destination))
        default:
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: url.path])
            }
            return .regular(data)
        }
    }

    /// Whether this is a folder.
    open var isDirectory: Bool {
        if case .directory = kind { return true }
        return false
    }

    /// Whether this is a regular file.
    open var isRegularFile: Bool {
        if case .regular = kind { return true }
        return false
    }

    /// Whether this is a symbolic link.
    open var isSymbolicLink: Bool {
        if case .link = kind { return true }
        return false
    }

    /// A folder's children by name; nil for other kinds.
    open var fileWrappers: [String: FileWrapper]? {
        if case .directory(let children) = kind { return children }
        return nil
    }

    /// A regular file's contents; nil for other kinds.
    open var regularFileContents: Data? {
        if case .regular(let data) = kind { return data }
        return nil
    }

    /// A link's destination; nil for other kinds.
    open var symbolicLinkDestinationURL: URL? {
        if case .link(let url) = kind { return url }
        return nil
    }

    /// Adds a child to a folder under its preferred name (made unique) and returns the name used.
    @discardableResult
    open func addFileWrapper(_ child: FileWrapper) -> String {
        guard case .directory(var children) = kind else { preconditionFailure("addFileWrapper on a wrapper that is not a folder") }
        let base = child.preferredFilename ?? "Untitled"
        var name = base
        var counter = 2
        while children[name] != nil {
            name = "\(counter) \(base)"
            counter += 1
        }
        children[name] = child
        kind = .directory(children)
        return name
    }

    /// Adds a regular file to a folder and returns the name used.
    @discardableResult
    open func addRegularFile(withContents data: Data, preferredFilename fileName: String) -> String {
        let child = FileWrapper(regularFileWithContents: data)
        child.preferredFilename = fileName
        return addFileWrapper(child)
    }

    /// Removes a child from a folder.
    open func removeFileWrapper(_ child: FileWrapper) {
        guard case .directory(var children) = kind else { return }
        if let key = children.first(where: { $0.value === child })?.key { children[key] = nil }
        kind = .directory(children)
    }

    /// The name under which `child` is kept, or nil.
    open func keyForChildFileWrapper(_ child: FileWrapper) -> String? {
        fileWrappers?.first { $0.value === child }?.key
    }

    /// Whether the item at `url` has the same contents as this wrapper.
    open func matchesContents(of url: URL) -> Bool {
        guard let other = try? FileWrapper(url: url) else { return false }
        return Self.sameContents(self, other)
    }

    private static func sameContents(_ a: FileWrapper, _ b: FileWrapper) -> Bool {
        switch (a.kind, b.kind) {
        case (.regular(let x), .regular(let y)): return x == y
        case (.link(let x), .link(let y)): return x.relativePath == y.relativePath
        case (.directory(let x), .directory(let y)):
            return x.keys.sorted() == y.keys.sorted() && x.allSatisfy { sameContents($0.value, y[$0.key]!) }
        default: return false
        }
    }

    /// Writes the wrapper to `url` (replacing what is there). With `.atomic` it is written beside
    /// `url` first and renamed into place.
    open func write(to url: URL, options: WritingOptions = [], originalContentsURL: URL? = nil) throws {
        let manager = FileManager.default
        if options.contains(.atomic) {
            let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).folio-save-\(UInt64.random(in: 0...UInt64.max))")
            do {
                try writeItem(to: temporary)
                if manager.fileExists(atPath: url.path) || (try? manager.destinationOfSymbolicLink(atPath: url.path)) != nil {
                    // rename(2) cannot replace a non-empty folder: swap through a second name.
                    let old = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).folio-old-\(UInt64.random(in: 0...UInt64.max))")
                    guard rename(url.path, old.path) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
                    guard rename(temporary.path, url.path) == 0 else {
                        rename(old.path, url.path)
                        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
                    }
                    try? manager.removeItem(at: old)
                } else {
                    guard rename(temporary.path, url.path) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
                }
            } catch {
                try? manager.removeItem(at: temporary)
                throw error
            }
        } else {
            if manager.fileExists(atPath: url.path) { try manager.removeItem(at: url) }
            try writeItem(to: url)
        }
        if options.contains(.withNameUpdating) { filename = url.lastPathComponent }
    }

    private func writeItem(to url: URL) throws {
        switch kind {
        case .regular(let data):
            try data.write(to: url)
        case .directory(let children):
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            for (name, child) in children { try child.writeItem(to: url.appendingPathComponent(name)) }
        case .link(let destination):
            // As read: a relative destination stays relative (`path` would resolve it against the
            // working folder).
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: destination.relativePath)
        }
        if let permissions = fileAttributes[FileAttributeKey.posixPermissions.rawValue] as? Int {
            chmod(url.path, mode_t(permissions))
        }
    }

    /// Reads the wrapper again from `url`.
    open func read(from url: URL, options: ReadingOptions = []) throws {
        kind = try Self.read(url)
        filename = url.lastPathComponent
    }
}
#endif
