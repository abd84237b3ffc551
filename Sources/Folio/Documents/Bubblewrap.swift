import FolioSystem
import Foundation
import Logging

/// Runs tools that read untrusted files inside bubblewrap when the machine allows namespaces:
/// everything read-only, no network, no other processes, and the tool gone with its parent. Thumbnailers and the content index's text extraction use it.
package enum Bubblewrap {
    /// bubblewrap, when it is installed and can make namespaces here (a container may forbid it).
    package static let usable: String? = {
        guard let bwrap = ExecutableSearch.locate("bwrap") else { return nil }
        guard ThumbnailGenerator.run([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "/bin/true"]) else {
            Logger(label: "folio.sandbox").warning("bubblewrap cannot make namespaces here; thumbnailers and text extraction run without a sandbox")
            return nil
        }
        return bwrap
    }()

    /// `command` inside bubblewrap (as it is without one): `readable` paths stay readable over the
    /// private `/tmp`, `writable` folders writable. Without `privateTemporary`, `/tmp` is the
    /// machine's, read-only like the rest (for a long-lived reader of any file, some in `/tmp`).
    package static func wrap(_ command: [String], readable: [String] = [], writable: [String] = [], privateTemporary: Bool = true) -> [String] {
        guard let bwrap = usable else { return command }
        var arguments = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if privateTemporary { arguments += ["--tmpfs", "/tmp"] }
        for path in readable { arguments += ["--ro-bind", path, path] }
        for path in writable { arguments += ["--bind", path, path] }
        return arguments + ["--unshare-all", "--die-with-parent", "--new-session", "--"] + command
    }
}
