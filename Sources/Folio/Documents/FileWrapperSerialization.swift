import Foundation

#if !canImport(Darwin)
/// `FileWrapper.serializedRepresentation`'s bytes: one JSON object,
///
///     {"format": "folio.filewrapper", "version": 1, "entries": [entry, …]}
///
/// whose first entry is the wrapper itself (path `""`) and each later one an item inside it, after
/// its folder: `{"p": path ("a/b.txt"), "k": "file" | "folder" | "link", "d": base64 contents (a
/// file), "t": destination (a link), "n": preferred name (the wrapper itself only), "m": POSIX
/// permissions, "md": modification date (seconds since 1970)}`.
///
/// The bytes come from other programs (a pasteboard, a drag), so decoding refuses, whole, anything
/// but that: unknown format or version, a path with an empty, `.` or `..` component or a NUL, an
/// item whose folder is not listed before it, a name listed twice, more than
/// ``maximumEntries`` entries or a path longer than ``maximumPath`` bytes.
enum FileWrapperSerialization {
    static let format = "folio.filewrapper"
    static let maximumEntries = 100_000
    static let maximumPath = 4096

    static func encode(_ wrapper: FileWrapper) -> Data? {
        var entries: [WireValue] = []
        func visit(_ wrapper: FileWrapper, _ path: String) {
            var entry: [String: WireValue] = ["p": .string(path)]
            switch wrapper.kind {
            case .regular(let data):
                entry["k"] = "file"
                entry["d"] = .string(data.base64EncodedString())
            case .link(let destination):
                entry["k"] = "link"
                entry["t"] = .string(destination.relativePath)
            case .directory:
                entry["k"] = "folder"
            }
            if path.isEmpty, let name = wrapper.preferredFilename { entry["n"] = .string(name) }
            if let permissions = wrapper.fileAttributes[FileAttributeKey.posixPermissions.rawValue] as? Int { entry["m"] = .int(Int64(permissions)) }
            if let date = wrapper.fileAttributes[FileAttributeKey.modificationDate.rawValue] as? Date {
                entry["md"] = .double(date.timeIntervalSince1970)
            }
            entries.append(.object(entry))
            if case .directory(let children) = wrapper.kind {
                for name in children.keys.sorted() { visit(children[name]!, path.isEmpty ? name : path + "/" + name) }
            }
        }
        visit(wrapper, "")
        let document: WireValue = ["format": .string(format), "version": 1, "entries": .array(entries)]
        return Data(document.serialized())
    }

    static func decode(_ data: Data) -> FileWrapper? {
        guard let document = try? WireValue(parsing: data), document["format"]?.stringValue == format, document["version"]?.intValue == 1,
            let entries = document["entries"]?.arrayValue, !entries.isEmpty, entries.count <= maximumEntries,
            entries[0]["p"]?.stringValue == "", let root = wrapper(entries[0])
        else { return nil }
        if let name = entries[0]["n"] {
            guard let name = name.stringValue, isValidName(name) else { return nil }
            root.preferredFilename = name
        }
        var folders: [String: FileWrapper] = [:]
        if root.isDirectory { folders[""] = root }
        var seen: Set<String> = [""]
        for entry in entries.dropFirst() {
            guard let path = entry["p"]?.stringValue, entry["n"] == nil, path.utf8.count <= maximumPath, seen.insert(path).inserted else { return nil }
            let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard components.allSatisfy(isValidName), let parent = folders[components.dropLast().joined(separator: "/")],
                let child = wrapper(entry)
            else { return nil }
            child.preferredFilename = components.last!
            parent.addFileWrapper(child)
            if child.isDirectory { folders[path] = child }
        }
        return root
    }

    private static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0) && name.utf8.count <= 255
    }

    /// One entry's wrapper, without children; nil when the entry is malformed.
    private static func wrapper(_ entry: WireValue) -> FileWrapper? {
        let wrapper: FileWrapper
        switch entry["k"]?.stringValue {
        case "file":
            guard entry["t"] == nil, let text = entry["d"]?.stringValue, let data = Data(base64Encoded: text) else { return nil }
            wrapper = FileWrapper(kind: .regular(data))
        case "folder":
            guard entry["d"] == nil, entry["t"] == nil else { return nil }
            wrapper = FileWrapper(kind: .directory([:]))
        case "link":
            guard entry["d"] == nil, let destination = entry["t"]?.stringValue, !destination.isEmpty, !destination.utf8.contains(0),
                destination.utf8.count <= maximumPath
            else { return nil }
            wrapper = FileWrapper(kind: .link(URL(fileURLWithPath: destination)))
        default:
            return nil
        }
        if let permissions = entry["m"] {
            guard let mode = permissions.intValue, (0...0o7777).contains(mode) else { return nil }
            wrapper.fileAttributes[FileAttributeKey.posixPermissions.rawValue] = Int(mode)
        }
        if let date = entry["md"] {
            let seconds: Double
            switch date {
            case .int(let value): seconds = Double(value)
            case .double(let value): seconds = value
            default: return nil
            }
            guard seconds.isFinite, abs(seconds) < 1e11 else { return nil }
            wrapper.fileAttributes[FileAttributeKey.modificationDate.rawValue] = Date(timeIntervalSince1970: seconds)
        }
        return wrapper
    }
}
#endif
