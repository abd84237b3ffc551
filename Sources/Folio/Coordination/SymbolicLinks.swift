import FolioSystem
import Foundation
import SystemPackage

/// Follows symbolic links for `.resolvesSymbolicLink`.
enum SymbolicLinks {
    /// The URL the link at `url` finally points to (up to 40 links, as the kernel allows), or `url`
    /// itself when it is not a link or cannot be read.
    static func resolve(_ url: URL) -> URL {
        var path = CoordinationPath.normalize(url.path)
        var hops = 0
        while hops < 40, let target = FilePath(path).symbolicLinkTarget() {
            hops += 1
            let directory = CoordinationPath.ancestors(of: path).first ?? "/"
            path = CoordinationPath.normalize(target, base: directory)
        }
        return hops == 0 ? url : URL(fileURLWithPath: path)
    }
}
