import Folio
import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The user's trash as the freedesktop.org Trash specification lays it out (`$XDG_DATA_HOME/Trash`,
/// `files/` and `info/<name>.trashinfo`), so Nautilus, Dolphin and `gio trash` see what Folio
/// trashed and Folio sees theirs. Items are moved in and out through `CoordinatedFiles`.
///
/// Trashing writes the `.trashinfo` first (created exclusively, which reserves the name), then
/// moves the item; a crash between the two leaves an info file without its item, which the
/// specification tells readers to ignore, and `items()` does.
struct FreedesktopTrash: Sendable {
    /// The trash folder (`$XDG_DATA_HOME/Trash`).
    let directory: String
    let files: CoordinatedFiles

    /// One trashed item.
    struct Item: Sendable, Equatable {
        /// Its name in `files/` (unique in the trash).
        var name: String
        /// Where it was.
        var originalPath: String
        /// When it was trashed (local time, as the specification writes it).
        var deletionDate: Date?
        /// Its path in the trash.
        var path: String
    }

    var filesDirectory: String { directory + "/files" }
    var infoDirectory: String { directory + "/info" }

    /// Moves `item` (the entry itself, resolved once) to the trash and returns its record.
    func trash(_ item: ResolvedItem, now: Date = Date()) throws(CoordinationFailure) -> Item {
        for folder in [directory, filesDirectory, infoDirectory] where mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw CoordinationFailure(kind: .failed, message: "cannot create the trash folder \(folder): \(String(cString: strerror(errno)))")
        }
        let trashed: ResolvedItem
        do { trashed = try ResolvedItem.resolve(filesDirectory) } catch {
            throw CoordinationFailure(kind: .failed, message: "cannot open the trash folder \(filesDirectory)")
        }
        let path = item.path
        let original = Self.fitting((path as NSString).lastPathComponent)
        let info = Self.info(path: path, date: now)
        // Reserve a name: the info file, created exclusively (the specification's own rule). A
        // name whose file is in `files/` without a record (another program's leftover) is skipped.
        var number = 1
        while true {
            let name = number == 1 ? original : Self.numbered(original, number)
            number += 1
            let infoPath = infoDirectory + "/" + name + ".trashinfo"
            let descriptor = open(infoPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                guard errno == EEXIST, number < 10_000 else {
                    throw CoordinationFailure(kind: .failed, message: "cannot write the trash's record for \(path): \(String(cString: strerror(errno)))")
                }
                continue
            }
            let written = info.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            let synced = fsync(descriptor) == 0
            close(descriptor)
            guard written == info.count, synced else {
                unlink(infoPath)
                throw CoordinationFailure(kind: .failed, message: "cannot write \(infoPath)")
            }
            do {
                _ = try files.move(item, into: trashed, named: name)
            } catch {
                unlink(infoPath)
                if error.isExists, number < 10_000 { continue }
                throw error
            }
            return Item(name: name, originalPath: path, deletionDate: now, path: filesDirectory + "/" + name)
        }
    }

    /// `name` cut (on a character boundary, the extension kept) so that `name.NNNN.trashinfo` fits
    /// in a file name's 255 bytes.
    static func fitting(_ name: String) -> String {
        let room = 255 - ".trashinfo".utf8.count - 6
        guard name.utf8.count > room else { return name }
        let suffix = (name as NSString).pathExtension
        let keep = suffix.isEmpty || suffix.utf8.count > 16 ? "" : "." + suffix
        var stem = Substring(name.dropLast(keep.count))
        while stem.utf8.count + keep.utf8.count > room { stem = stem.dropLast() }
        return String(stem) + keep
    }

    /// `name` with `.number` before its extension.
    static func numbered(_ name: String, _ number: Int) -> String {
        let stem = (name as NSString).deletingPathExtension, suffix = (name as NSString).pathExtension
        return stem + ".\(number)" + (suffix.isEmpty || stem.isEmpty ? "" : "." + suffix)
    }

    /// What is in the trash, newest first; info files without their item, or that cannot be
    /// read, are left out.
    func items() -> [Item] {
        var found: [Item] = []
        _ = DirectoryScanner().list(
            infoDirectory,
            visit: { entry in
                guard entry.name.hasSuffix(".trashinfo"), entry.status.kind == .regular, entry.status.size < 65_536 else { return }
                let name = String(entry.name.dropLast(".trashinfo".count))
                guard !name.isEmpty, let data = FileManager.default.contents(atPath: entry.path),
                    let parsed = Self.parse(info: data), (try? FileStatus(path: FilePath(filesDirectory + "/" + name))) != nil
                else { return }
                found.append(Item(name: name, originalPath: parsed.path, deletionDate: parsed.date, path: filesDirectory + "/" + name))
            }, skipped: { _, _ in })
        return found.sorted { ($0.deletionDate ?? .distantPast) > ($1.deletionDate ?? .distantPast) }
    }

    /// The trashed item called `name`.
    func item(named name: String) throws(CoordinationFailure) -> Item {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != "..", let found = items().first(where: { $0.name == name }) else {
            throw CoordinationFailure(kind: .notFound, message: "nothing called \(name) is in the trash")
        }
        return found
    }

    /// Puts a trashed item back in `folder` (the folder it was in, resolved once by the caller)
    /// under its name (refused if something took its place), then removes its record.
    func restore(_ item: Item, into folder: ResolvedItem) throws(CoordinationFailure) {
        let entry: ResolvedItem
        do { entry = try ResolvedItem.resolve(filesDirectory).entry(item.name) } catch {
            throw CoordinationFailure(kind: .notFound, message: "nothing called \(item.name) is in the trash")
        }
        _ = try files.move(entry, into: folder, named: (item.originalPath as NSString).lastPathComponent)
        unlink(infoDirectory + "/" + item.name + ".trashinfo")
    }

    // MARK: The .trashinfo format

    /// The info file's text for an item at `path` trashed at `date`.
    static func info(path: String, date: Date) -> [UInt8] {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return Array("[Trash Info]\nPath=\(encode(path))\nDeletionDate=\(formatter.string(from: date))\n".utf8)
    }

    /// Reads an info file (another program may have written it: anything malformed gives nil).
    /// The path must decode to an absolute, plain path.
    static func parse(info data: Data) -> (path: String, date: Date?)? {
        guard let text = String(data: data, encoding: .utf8) else { return nil }
        var inSection = false
        var path: String?
        var date: Date?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasPrefix("[") {
                inSection = line == "[Trash Info]"
                continue
            }
            guard inSection, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals], value = String(line[line.index(after: equals)...])
            if key == "Path", path == nil {
                path = value.removingPercentEncoding
            } else if key == "DeletionDate", date == nil {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
                date = formatter.date(from: value)
            }
        }
        guard let path, (try? WebScope.checkForm(path)) != nil, path != "/" else { return nil }
        return (path, date)
    }

    /// Percent-encodes a path as the specification asks (RFC 2396: `/` and unreserved characters kept).
    static func encode(_ path: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "/-_.!~*'()")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}
