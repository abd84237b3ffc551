import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Follows symbolic links for `.resolvesSymbolicLink`.
enum SymbolicLinks {
    /// The URL the link at `url` finally points to (up to 40 links, as the kernel allows), or `url`
    /// itself when it is not a link or cannot be read.
    static func resolve(_ url: URL) -> URL {
        var path = CoordinationPath.normalize(url.path)
        var hops = 0
        while hops < 40, let target = readLink(path) {
            hops += 1
            let directory = CoordinationPath.ancestors(of: path).first ?? "/"
            path = CoordinationPath.normalize(target, base: directory)
        }
        return hops == 0 ? url : URL(fileURLWithPath: path)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
