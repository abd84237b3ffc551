import FolioSystem
import SystemPackage
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A document's stable identity: a random identifier kept in the `user.folio.id` extended attribute,
/// which stays with the file across renames and moves within its volume (and is copied across safe
/// saves). Where extended attributes cannot be set, the device and inode stand in, with the item's
/// birth time or inode generation (``FileIncarnation``): the inode form.
package enum DocumentIdentity {
    /// The extended attribute holding the identifier.
    package static let attribute = "user.folio.id"

    /// The identity of the item at `path`; with `creating`, gives the item one when it has none.
    ///
    /// - Throws: `CocoaError.fileReadNoSuchFile` when there is no item.
    package static func identifier(ofItemAt path: String, creating: Bool) throws -> String {
        let file = FilePath(path)
        let status: FileStatus
        do {
            status = try FileStatus(path: file, followSymlinks: true)
        } catch {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        if let bytes = try? file.extendedAttribute(named: attribute), let text = String(validating: bytes, as: UTF8.self),
            isValid(text)
        {
            return text
        }
        if creating {
            let made = UUID().uuidString.lowercased()
            if (try? file.setExtendedAttribute(named: attribute, to: Array(made.utf8))) != nil { return made }
        }
        return inodeForm(ofItemAt: path, device: status.device, inode: status.inode, followSymlinks: true)
    }

    /// The identity of `item`, read (and with `creating`, given) through its descriptor: the item
    /// checked, whatever its path names by now.
    package static func identifier(of item: ResolvedItem, creating: Bool) -> String {
        if let bytes = item.extendedAttribute(named: attribute), let text = String(validating: bytes, as: UTF8.self), isValid(text) {
            return text
        }
        if creating {
            let made = UUID().uuidString.lowercased()
            if (try? item.setExtendedAttribute(named: attribute, to: Array(made.utf8))) != nil { return made }
        }
        let base = "inode-\(item.status.device)-\(item.status.inode)"
        return item.incarnation.map { base + "-" + $0 } ?? base
    }

    /// The inode form of the item at `path`: `inode-<device>-<inode>-<mark>`, the mark telling it
    /// from a later item given the same device and inode; without a mark (the file system keeps
    /// neither a birth time nor a generation), `inode-<device>-<inode>`, which
    /// ``inodeForm(_:namesItemAt:status:followSymlinks:)`` never trusts.
    package static func inodeForm(ofItemAt path: String, device: UInt64, inode: UInt64, followSymlinks: Bool) -> String {
        let base = "inode-\(device)-\(inode)"
        return FileIncarnation.mark(ofItemAt: path, followSymlinks: followSymlinks).map { base + "-" + $0 } ?? base
    }

    /// Whether the inode form `form` names the item at `path` (whose status is `status`): the same
    /// device, inode and mark (birth time and generation, as far as both are known). Never the
    /// device and inode alone: a form without a mark (made where the file system kept none, or by
    /// an earlier version of Folio) names nothing.
    package static func inodeForm(_ form: String, namesItemAt path: String, status: FileStatus, followSymlinks: Bool) -> Bool {
        let parts = form.split(separator: "-")
        guard parts.count == 4, parts[1] == "\(status.device)", parts[2] == "\(status.inode)",
            let now = FileIncarnation.mark(ofItemAt: path, followSymlinks: followSymlinks)
        else { return false }
        // Each part of the mark known both then and now must agree, and one at least must be
        // known both times (a generation cannot be read from a file this user may not open).
        let then = marks(parts[3]), current = marks(Substring(now))
        var compared = 0
        for key in ["b", "g"] {
            guard let old = then[key], let new = current[key] else { continue }
            guard old == new else { return false }
            compared += 1
        }
        return compared > 0
    }

    /// A mark's parts by letter: `b1234g56` is b: 1234, g: 56.
    private static func marks(_ mark: Substring) -> [String: Substring] {
        var result: [String: Substring] = [:]
        var key: Character?
        var start = mark.startIndex
        for index in mark.indices where mark[index] == "b" || mark[index] == "g" {
            if let key { result[String(key)] = mark[start..<index] }
            key = mark[index]
            start = mark.index(after: index)
        }
        if let key { result[String(key)] = mark[start...] }
        return result
    }

    /// Whether `text` is an identifier this system made (so it is safe as a file name): a lowercase
    /// UUID, or the inode form (digits, `-`, and the mark's `b` or `g`).
    package static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        if bytes.count == 36 {
            for (index, byte) in bytes.enumerated() {
                if [8, 13, 18, 23].contains(index) {
                    guard byte == UInt8(ascii: "-") else { return false }
                } else {
                    guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    else { return false }
                }
            }
            return true
        }
        guard text.hasPrefix("inode-"), bytes.count <= 100 else { return false }
        return text.dropFirst(6).allSatisfy { $0.isASCII && ($0.isNumber || $0 == "-" || $0 == "b" || $0 == "g") }
    }

    /// Gives the item at `path` the identity `identifier` when it has none (a writer replaced the
    /// file without keeping its attributes). Returns whether it did.
    @discardableResult
    package static func adopt(_ identifier: String, at path: String) -> Bool {
        guard isValid(identifier), !identifier.hasPrefix("inode-") else { return false }
        let file = FilePath(path)
        if let bytes = try? file.extendedAttribute(named: attribute), let text = String(validating: bytes, as: UTF8.self), isValid(text) {
            return false
        }
        return (try? file.setExtendedAttribute(named: attribute, to: Array(identifier.utf8))) != nil
    }

    /// Whether an item on `device` and `inode` that bears `reference`'s identity is that document:
    /// on the inode the reference recorded, yes; on another inode only when the recorded one no
    /// longer holds that identity (a save by rename, a download, a move across file systems) —
    /// while it still does, the newcomer is a copy (`cp -a` copies the identity attribute), a new
    /// document. A store that records where it saw an identity (grants, version manifests) asks
    /// this on every use, so what a copy carries never decides alone.
    package static func isSameDocument(_ reference: ItemReference, device: UInt64, inode: UInt64) -> Bool {
        if reference.device == device && reference.inode == inode { return true }
        return !recordedInodeHolds(reference)
    }

    /// Whether the inode a reference recorded still holds the reference's identity: at the path it
    /// was last seen at, or under another name in that folder.
    package static func recordedInodeHolds(_ reference: ItemReference) -> Bool {
        func holds(_ candidate: ResolvedItem) -> Bool {
            candidate.status.device == reference.device && candidate.status.inode == reference.inode
                && candidate.extendedAttribute(named: attribute).flatMap { String(validating: $0, as: UTF8.self) } == reference.identity
        }
        if let there = try? ResolvedItem.resolve(reference.path), holds(there) { return true }
        let folder = (reference.path as NSString).deletingLastPathComponent
        guard let stream = opendir(PathRedirect.physical(folder)) else { return false }
        defer { closedir(stream) }
        while let record = readdir(stream) {
            guard UInt64(record.pointee.d_ino) == reference.inode else { continue }
            if let named = try? ResolvedItem.resolve(folder + "/" + DirectoryRecord.name(record)), holds(named) { return true }
        }
        return false
    }

    /// Gives the item at `path` a new identity of its own (a copy found carrying another
    /// document's), or when attributes cannot be set there, returns its inode form.
    package static func reidentify(itemAt path: String, status: FileStatus) -> String {
        let made = UUID().uuidString.lowercased()
        if (try? FilePath(path).setExtendedAttribute(named: attribute, to: Array(made.utf8))) != nil { return made }
        return inodeForm(ofItemAt: path, device: status.device, inode: status.inode, followSymlinks: true)
    }

    /// Copies the identity and the other `user.` attributes (tags among them) from `source` to
    /// `destination`, as a safe save must before renaming its temporary file over the document.
    package static func copyUserAttributes(from source: String, to destination: String) {
        let from = FilePath(source), to = FilePath(destination)
        guard let names = try? from.extendedAttributeNames() else { return }
        for name in names where name.hasPrefix("user.") {
            if let value = try? from.extendedAttribute(named: name) {
                try? to.setExtendedAttribute(named: name, to: value)
            }
        }
    }
}
