import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Builds a hostile tree under `root`: a name with a newline (`line\nbreak.txt`), a name that is not
/// UTF-8 (`bad-\xFF\xFE.txt`), a symbolic link to its own folder (`loop/self`), folders nested
/// beyond PATH_MAX with `deep.txt` at the bottom, and a folder `big` of `bigFolderEntries` files.
enum HostileTree {
    static func build(in root: String, bigFolderEntries: Int) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: root + "/line\nbreak.txt", contents: Data("x".utf8))
        let raw = Array((root + "/bad-").utf8) + [0xFF, 0xFE] + Array(".txt".utf8) + [0]
        let fd = raw.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644) }
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        close(fd)
        try FileManager.default.createDirectory(atPath: root + "/loop", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/loop/self", withDestinationPath: root + "/loop")
        // Folders beyond PATH_MAX, made step by step relative to the one before.
        var folder = open(root, O_RDONLY | O_DIRECTORY)
        for _ in 0..<22 {
            let name = String(repeating: "d", count: 200)
            mkdirat(folder, name, 0o755)
            let next = openat(folder, name, O_RDONLY | O_DIRECTORY)
            close(folder)
            folder = next
        }
        close(openat(folder, "deep.txt", O_CREAT | O_WRONLY, 0o644))
        close(folder)
        try FileManager.default.createDirectory(atPath: root + "/big", withIntermediateDirectories: true)
        for index in 0..<bigFolderEntries { close(open(root + "/big/f\(index).txt", O_CREAT | O_WRONLY, 0o644)) }
    }
}
